import ArgumentParser

/// The `mainloop` tool: scenario replay, the demo service and its clients.
@main
struct MainLoopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mainloop",
        abstract: "An iOS-style main run loop for Linux services, on libevent.",
        subcommands: [DemoCommand.self, RunCommand.self, CtlCommand.self, DefaultsCommand.self, ReplayCommand.self]
    )
}
