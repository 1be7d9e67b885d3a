import JOSE
import TestSupport

/// One Wycheproof signature-verification case (`tcId`, `msg`, `sig`, `result`, `flags`).
struct WycheproofCase: CustomStringConvertible {
    enum Result: String { case valid, invalid, acceptable }

    let tcId: Int
    let comment: String
    let flags: [String]
    let message: [UInt8]
    let signature: [UInt8]
    let result: Result

    init(_ test: JSONTree) {
        tcId = Int(test["tcId"]!.int64!)
        comment = test["comment"]?.string ?? ""
        flags = test["flags"]?.array?.compactMap(\.string) ?? []
        message = Hex.decode(test["msg"]?.string ?? "")
        signature = Hex.decode(test["sig"]?.string ?? "")
        result = Result(rawValue: test["result"]!.string!)!
    }

    var description: String { "tcId \(tcId) (\(result.rawValue), \(comment), flags \(flags))" }
}

/// A Wycheproof file: its groups, each a JSON object whose `tests` are ``WycheproofCase``s.
struct WycheproofFile {
    let name: String
    let declaredCount: Int
    let groups: [JSONTree]

    init(_ name: String) throws {
        let tree = try VectorFiles.json("external/wycheproof/\(name)")
        self.name = name
        declaredCount = Int(tree["numberOfTests"]!.int64!)
        groups = tree["testGroups"]!.array!
    }

    /// Every case of a group.
    static func cases(_ group: JSONTree) -> [WycheproofCase] { group["tests"]!.array!.map(WycheproofCase.init) }
}
