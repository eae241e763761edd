/// A mistake on the command line: printed as `error: <message>` with where
/// help is, exit status 64 (EX_USAGE).
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A command's exit status, thrown to end it (after it printed why).
struct ExitCode: Error {
    let status: Int32
    init(_ status: Int32) { self.status = status }
}

/// A failure a command reports in words: printed as `error: <message>`,
/// exit status 1.
struct ToolError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
