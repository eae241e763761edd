import Glibc

/// The `mainloop` tool: scenario replay, the demo service and its clients.
@main
enum MainLoopCommand {
    /// One subcommand: what it accepts and how to run it.
    struct Subcommand: Sendable {
        let spec: CommandSpec
        let run: @Sendable (ParsedArguments) throws -> Void
    }

    static let subcommands: [Subcommand] = [
        Subcommand(spec: DemoCommand.spec) { try DemoCommand($0).run() },
        Subcommand(spec: RunCommand.spec) { try RunCommand($0).run() },
        Subcommand(spec: CtlCommand.spec) { try CtlCommand($0).run() },
        Subcommand(spec: DefaultsCommand.spec) { try DefaultsCommand($0).run() },
        Subcommand(spec: ReplayCommand.spec) { try ReplayCommand($0).run() },
    ]

    static var help: String {
        var text = """
            OVERVIEW: An iOS-style main run loop for Linux services, on libevent.

            USAGE: mainloop <subcommand> [<options>] [<arguments>]

            SUBCOMMANDS:

            """
        let width = subcommands.map(\.spec.name.count).max() ?? 0
        for subcommand in subcommands {
            let name = subcommand.spec.name
            text += "  \(name)\(String(repeating: " ", count: width - name.count))   \(subcommand.spec.abstract)\n"
        }
        text += "\n  See 'mainloop help <subcommand>' or 'mainloop <subcommand> --help' for its options.\n"
        return text
    }

    /// Parses the command line and runs the subcommand. Every error the
    /// tool prints starts with `error:`; a usage mistake exits 64 (EX_USAGE).
    static func main() {
        // From argv itself: `CommandLine.arguments` is built in a
        // `swift_once` the tool would use only here. (argc may be 0: an
        // exec with an empty argv is a missing subcommand, not a crash.)
        let words = (0..<Int(max(CommandLine.argc, 0))).dropFirst().map { String(cString: CommandLine.unsafeArgv[$0]!) }
        guard let first = words.first else {
            usage("missing subcommand (\(subcommands.map(\.spec.name).joined(separator: ", "))); see 'mainloop --help'")
        }
        if first == "--help" || first == "-h" { printHelp(help) }
        if first == "help" {
            guard let name = words.dropFirst().first else { printHelp(help) }
            printHelp(subcommand(named: name).spec.help)
        }
        let subcommand = subcommand(named: first)
        do {
            let parsed = try ParsedArguments(words.dropFirst(), spec: subcommand.spec)
            if parsed.helpRequested { printHelp(subcommand.spec.help) }
            try subcommand.run(parsed)
        } catch let error as UsageError {
            usage("\(error.description); see 'mainloop \(subcommand.spec.name) --help'")
        } catch let exit as ExitCode {
            Glibc.exit(exit.status)
        } catch {
            Output.error("error: \(error)")
            Glibc.exit(1)
        }
    }

    /// The subcommand called `name`; an unknown name is a usage mistake.
    private static func subcommand(named name: String) -> Subcommand {
        guard let found = subcommands.first(where: { $0.spec.name == name }) else {
            usage("unknown subcommand '\(name)'; see 'mainloop --help'")
        }
        return found
    }

    /// Help is asked for: printed on stdout, exit 0.
    private static func printHelp(_ text: String) -> Never {
        Output.line(text)
        exit(0)
    }

    private static func usage(_ message: String) -> Never {
        Output.error("error: \(message)")
        exit(64)
    }
}
