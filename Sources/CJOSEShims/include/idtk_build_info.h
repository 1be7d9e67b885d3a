// Where the binary came from: the commit a release was built from, which scripts/package passes to the C
// compiler as -DIDTK_BUILD_COMMIT="<40 hex digits>". A build from source without it answers an empty string.
#ifndef IDTK_BUILD_INFO_H
#define IDTK_BUILD_INFO_H

/// The commit this binary was built from, or "" when the build did not say.
const char *idtk_build_commit(void);

#endif
