@testable import AppLifecycle
import MainLoop
import SystemNotifications
import Testing
import TestSupport

/// Loop-thread-only log for the consumers below (they run on the loop's executor).
private final class Log: @unchecked Sendable {
    var lines: [String] = []
}

@Suite(.ownThread, .timeLimit(.minutes(2))) struct AsyncStreamTests {
    /// A `for try await` consumer gets exactly what an observer gets: live
    /// changes one by one, nothing while suspended, the merged one on resume.
    @Test func notificationStreamMatchesAnObserver() throws {
        let loop = try MainRunLoop(deterministic: true)
        let application = try Application(loop: loop)
        let center = application.notifications
        let observed = Log(), streamed = Log()
        try center.addObserver(for: .orientation) { observed.lines.append("\($0.name) \($0.value.jsonText) x\($0.merged)") }
        let stream = try center.notifications(of: .orientation)
        Task(executorPreference: loop.executor) {
            for try await notification in stream {
                streamed.lines.append("\(notification.name) \(notification.value.jsonText) x\(notification.merged)")
            }
        }
        try application.perform(.launch)
        try center.post(.orientation(.faceUp))
        try center.post(.orientation(.faceDown))
        try application.perform(.home)
        for value in [DeviceOrientation.landscapeLeft, .portrait, .landscapeRight] { try center.post(.orientation(value)) }
        try center.post(.locale("fr_FR"))  // another kind: not in this stream
        try loop.runUntilIdle()
        #expect(streamed.lines.count == 2, "nothing while suspended")
        try application.perform(.foreground)
        try loop.runUntilIdle()
        #expect(observed.lines.count == 3)
        #expect(streamed.lines == observed.lines)
    }

    /// A consumer that does not keep up ends the stream with an error after
    /// what was buffered, rather than losing a notification silently.
    @Test func aConsumerThatFallsBehindGetsAnErrorNotASilentGap() throws {
        let loop = try MainRunLoop(deterministic: true)
        let application = try Application(loop: loop)
        let center = application.notifications
        let stream = try center.notifications(of: .proximity, bufferLimit: 3)
        try application.perform(.launch)
        for index in 0..<6 { try center.post(.proximity(index % 2 == 0)) }
        let log = Log()
        Task(executorPreference: loop.executor) {
            do {
                for try await notification in stream { log.lines.append(notification.value.jsonText) }
                log.lines.append("finished")
            } catch {
                log.lines.append("\(error)")
            }
        }
        try loop.runUntilIdle()
        #expect(log.lines == ["true", "false", "true", "the consumer fell 3 elements behind; the stream ended rather than drop one"])
    }

    @Test func endingTheIterationRemovesTheObserver() throws {
        let loop = try MainRunLoop(deterministic: true)
        let application = try Application(loop: loop)
        let center = application.notifications
        let before = application.observers.count
        let stream = try center.notifications()
        #expect(application.observers.count == before + 1)
        let task = Task(executorPreference: loop.executor) {
            for try await _ in stream {}
        }
        try loop.runUntilIdle()
        task.cancel()
        try loop.runUntilIdle()
        #expect(application.observers.count == before)
    }

    @Test func stateChangesArriveInOrder() throws {
        let loop = try MainRunLoop(deterministic: true)
        let application = try Application(loop: loop)
        let states = application.stateChanges()
        let log = Log()
        Task(executorPreference: loop.executor) {
            for try await state in states { log.lines.append("\(state)") }
        }
        try application.perform(.launch)
        try application.perform(.home)
        try application.perform(.foreground)
        try loop.runUntilIdle()
        #expect(log.lines == ["inactive", "active", "inactive", "background", "suspended", "background", "inactive", "active"])
    }
}
