import MainLoopKit

/// `mainloop defaults`: edits a user-defaults domain from another process,
/// like macOS's `defaults`. A running service notices the change.
struct DefaultsCommand {
    static let spec = CommandSpec(
        name: "defaults",
        abstract: "Read or edit user defaults: read [KEY] | write KEY VALUE | delete KEY.",
        discussion: """
            VALUE is read as JSON when it parses (14, true, "dark", [1,2]), otherwise as a plain \
            string. Writes are atomic and safe against concurrent writers; a corrupt file is \
            reported and never overwritten.
            """,
        options: [
            .value("domain", "domain", "Defaults domain (file under $XDG_CONFIG_HOME/mainloop/).", default: "mainloop"),
            .value("file", "path", "Defaults file (instead of a domain)."),
        ],
        arguments: "read [KEY] | write KEY VALUE | delete KEY",
        argumentsHelp: "What to do."
    )

    let domain: String
    let file: String?
    let words: [String]

    init(_ arguments: ParsedArguments) throws(UsageError) {
        domain = arguments.string("domain")!
        file = arguments.string("file")
        words = arguments.arguments
        if arguments.isGiven("domain") && file != nil { throw UsageError("use either --domain or --file, not both") }
        switch (words.first, words.count) {
        case ("read", 1), ("read", 2), ("write", 3), ("delete", 2): return
        default: throw UsageError("expected: read [KEY] | write KEY VALUE | delete KEY")
        }
    }

    func run() throws {
        let store: UserDefaultsStore
        if let file {
            store = UserDefaultsStore(path: file)
        } else {
            do { store = try UserDefaultsStore(domain: domain) } catch { throw fail(error) }
        }
        do {
            switch words[0] {
            case "read" where words.count == 2:
                guard let value = try store.value(forKey: words[1]) else {
                    Output.error("error: no value for key '\(words[1])' in \(store.path)")
                    throw ExitCode(1)
                }
                Output.line(value.jsonText)
            case "read":
                Output.line(JSONValue.object(try store.dictionary()).jsonText)
            case "write":
                try store.set(CtlRequest.value(words[2]), forKey: words[1])
            default:
                try store.removeValue(forKey: words[1])
            }
        } catch let error as UserDefaultsError {
            throw fail(error)
        }
    }

    private func fail(_ error: UserDefaultsError) -> ExitCode {
        Output.error("error: \(error)")
        return ExitCode(1)
    }
}
