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

/// Lets a handle on any thread (a stream's termination handler, an
/// ``AppWorkGate``) reach the application through the loop, without
/// keeping it alive: a dropped application needs no observer removed.
final class WeakApplication {
    weak var application: Application?
    init(_ application: Application) { self.application = application }
}

extension Application {
    /// Runs `body` with this application on its loop when a stream ends
    /// (on any thread), if the application still exists then.
    fileprivate func onStreamTermination(_ body: @escaping @Sendable (Application) -> Void) -> @Sendable () -> Void {
        let weak = LoopBound(WeakApplication(self), loop: loop)
        return { [loop] in
            // A loop that is shut down (execute throws) runs nothing any
            // more, and its observers went with it.
            try? loop.execute {
                if let application = weak.value.application { body(application) }
            }
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
        let removeObserver = application.onStreamTermination { $0.notifications.removeObserver(token) }
        continuation.onTermination = { _ in removeObserver() }
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
        let removeObserver = onStreamTermination { $0.removeEngineObserver(token) }
        continuation.onTermination = { _ in removeObserver() }
        return stream
    }
}
