import ArgumentParser

extension IDToken {
    /// The subcommands, in the order `idtoken --help` lists them. Each lives in its own file; add new ones here.
    static let subcommandTypes: [any ParsableCommand.Type] = [
        VerifyCommand.self,
        InspectCommand.self,
        NonceCommand.self,
        KeysCommand.self,
        AuditCommand.self,
        ServeCommand.self,
    ]
}
