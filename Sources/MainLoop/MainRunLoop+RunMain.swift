extension MainRunLoop {
    /// Runs ``main`` on the main thread until `operation` finishes, then
    /// stops it and returns what `operation` threw, if anything: the way to
    /// have async code (a `ServiceGroup`, `for await` loops) in a service
    /// whose main loop runs `@MainActor` code.
    ///
    /// ```swift
    /// @main struct MyService {
    ///     static func main() throws {           // synchronous: it runs the loop
    ///         try MainRunLoop.runMain {
    ///             for try await state in application.stateChanges() { print(state) }
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// `operation` runs on the main actor, so on this loop and under the
    /// app's gating (its work waits while the app is suspended). If the loop
    /// is stopped first, the operation's task is cancelled and `runMain`
    /// returns once the loop has stopped.
    /// - Throws: what `operation` threw, or a ``MainLoopError`` of `run()`.
    @MainActor
    public static func runMain(_ operation: @escaping @MainActor () async throws -> Void) throws {
        let loop = main
        let failure = LockedValue<(any Error)?>(nil)
        let task = Task { @MainActor in
            do {
                try await operation()
            } catch {
                failure.withLock { $0 = error }
            }
            loop.stop()
        }
        try loop.run()
        task.cancel()
        if let error = failure.withLock({ $0 }) { throw error }
    }
}
