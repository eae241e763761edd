import MainLoop

/// An fd source owned by the app: parked while the app is suspended (no app
/// fd handler runs then) and resumed with the app; removed when the app dies.
/// Readiness is level-triggered, so data that arrived while suspended is
/// reported after the resume. Loop thread only.
public final class AppFileDescriptorSource {
    /// What the app asked to wait for.
    public private(set) var interest: Readiness
    private let source: FileDescriptorSource
    private weak var application: Application?

    init(application: Application, source: FileDescriptorSource, interest: Readiness) {
        self.application = application
        self.source = source
        self.interest = interest
    }

    /// The watched descriptor (not owned: never closed by the source).
    public var fileDescriptor: Int32 { source.fileDescriptor }

    /// Changes what the source waits for; takes effect now if the app runs,
    /// otherwise at the resume.
    /// - Throws: ``/MainLoop/MainLoopError/sourceRemoved`` once removed.
    public func update(interest newInterest: Readiness) throws(MainLoopError) {
        guard !source.isRemoved else { throw .sourceRemoved }
        interest = newInterest
        if application?.state.runsAppCode == true { try source.update(interest: newInterest) }
    }

    /// Stops watching.
    /// - Throws: ``/MainLoop/MainLoopError/sourceRemoved`` when already removed.
    public func remove() throws(MainLoopError) {
        try source.remove()
        application?.currentRun?.sources[ObjectIdentifier(self)] = nil
    }

    // Parking and resuming change only the interest of a live source; a
    // removed one (the app removed it, or the loop shut down) has nothing to
    // park. A failure (libevent refused the change) is returned for the
    // application to report.
    func park() -> MainLoopError? { change(to: []) }
    func resume() -> MainLoopError? { change(to: interest) }
    func removeForKill() { source.removeIfNeeded() }

    private func change(to newInterest: Readiness) -> MainLoopError? {
        guard !source.isRemoved else { return nil }
        do {
            try source.update(interest: newInterest)
            return nil
        } catch {
            return error
        }
    }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension AppFileDescriptorSource: Sendable {}
