import MainLoop
import SystemNotifications

/// Why a notification or state stream ended with an error.
public enum ObservationStreamError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The consumer fell `limit` elements behind: the stream ends here
    /// rather than drop one silently (the elements before it were delivered).
    case consumerFellBehind(limit: Int)

    public var description: String {
        switch self {
        case .consumerFellBehind(let limit):
            return "the consumer fell \(limit) elements behind; the stream ended rather than drop one"
        }
    }
}

/// Lets a stream's termination handler (any thread) reach the application
/// through a job on the loop (it touches it only there), without keeping
/// it alive: a dropped application needs no observer removed.
private struct WeakApplication: @unchecked Sendable {
    weak var application: Application?

    /// Runs `body` on the application's loop if both still exist.
    func onLoop(_ body: @escaping @Sendable (Application) -> Void) {
        guard let loop = application?.loop else { return }
        // Nothing to remove once the loop is shut down.
        _ = try? loop.execute { [self] in
            if let application { body(application) }
        }
    }
}

extension SystemNotificationCenter {
    /// The notifications of one kind (or of every kind with `nil`) as an
    /// async sequence, for services written with `for try await`. Each
    /// element is delivered exactly as an observer gets it: only while the
    /// app runs, live changes one by one, merged ones on resume, in order.
    ///
    /// The stream buffers up to `bufferLimit` notifications for a consumer
    /// that is behind; one more ends it with
    /// ``ObservationStreamError/consumerFellBehind(limit:)`` (memory stays
    /// bounded, and nothing is dropped silently). Ending the iteration (or
    /// cancelling its task) removes the observer.
    /// - Precondition: called on the loop thread.
    /// - Throws: ``/SystemNotifications/NotificationCenterError/unknownKind(_:)``.
    public func notifications(of kind: NotificationKind? = nil, bufferLimit: Int = 1024)
        throws(NotificationCenterError) -> AsyncThrowingStream<SystemNotification, any Error> {
        let (stream, continuation) = AsyncThrowingStream<SystemNotification, any Error>.makeStream(
            bufferingPolicy: .bufferingOldest(bufferLimit))
        let token = try addObserver(for: kind) { notification in
            if case .dropped = continuation.yield(notification) {
                continuation.finish(throwing: ObservationStreamError.consumerFellBehind(limit: bufferLimit))
            }
        }
        let weak = WeakApplication(application: application)
        continuation.onTermination = { _ in weak.onLoop { $0.notifications.removeObserver(token) } }
        return stream
    }
}

extension Application {
    /// The application's state changes as an async sequence: each new
    /// state, in order, as the engine enters it (also while suspended or
    /// not running). Bounded like
    /// ``SystemNotificationCenter/notifications(of:bufferLimit:)``; ending
    /// the iteration removes the observer.
    ///
    /// The stream is fed at once, but its consumer runs when its task does:
    /// a `@MainActor` task on the main loop is app code, gated while the app
    /// is suspended, so it sees background and suspended only after the app
    /// is back. To see every change as it happens (a supervisor, metrics),
    /// use a synchronous ``addEngineObserver(_:)``, or consume the stream
    /// from a task on another executor.
    /// - Precondition: called on the loop thread.
    public func stateChanges(bufferLimit: Int = 1024) -> AsyncThrowingStream<AppState, any Error> {
        let (stream, continuation) = AsyncThrowingStream<AppState, any Error>.makeStream(
            bufferingPolicy: .bufferingOldest(bufferLimit))
        let token = addEngineObserver { event in
            guard case .stateChanged(let state) = event else { return }
            if case .dropped = continuation.yield(state) {
                continuation.finish(throwing: ObservationStreamError.consumerFellBehind(limit: bufferLimit))
            }
        }
        let weak = WeakApplication(application: self)
        continuation.onTermination = { _ in weak.onLoop { $0.removeEngineObserver(token) } }
        return stream
    }
}
