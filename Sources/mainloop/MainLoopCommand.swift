import ArgumentParser
import Glibc

/// The `mainloop` tool: scenario replay, the demo service and its clients.
@main
struct MainLoopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mainloop",
        abstract: "An iOS-style main run loop for Linux services, on libevent.",
        subcommands: [DemoCommand.self, RunCommand.self, CtlCommand.self, DefaultsCommand.self, ReplayCommand.self]
    )

    /// ArgumentParser's own entry point, with one difference: every error
    /// the tool prints starts with `error:` (the parser says `Error:`, the
    /// commands say `error:`; a script grepping for one missed the other).
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                if !message.isEmpty { Output.line(message) }  // --help, --version
            } else if !message.isEmpty {
                Output.error(message.hasPrefix("Error: ") ? "error: " + message.dropFirst(7) : message)
            }
            Glibc.exit(code.rawValue)
        }
    }
}
