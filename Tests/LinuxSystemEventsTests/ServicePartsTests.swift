import Dispatch
import Foundation
import Glibc
import MainLoopKit
import Testing
import TestSupport

/// The service parts attached to an application of the test's own,
/// on a real loop thread and a real socket.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct ServicePartsTests {
    /// Holds loop-bound objects between the test and its loop thread (they
    /// are touched only on the loop thread).
    final class Held: @unchecked Sendable {
        var objects: [AnyObject] = []
    }

    /// A responder made inline (not held by the caller) keeps answering:
    /// the server holds what answers its requests.
    @Test func aResponderMadeInlineKeepsAnsweringThroughItsServer() throws {
        let thread = try LoopThread.start()
        defer { try? thread.stopAndJoin() }
        let directory = TemporaryDirectory()
        let path = directory.file("parts.sock")
        let held = Held()
        try OffLoopReleaseTests.onLoop(thread) {
            let application = try Application(loop: thread.loop)
            try application.perform(.launch)
            let server = try ControlResponder(application: application).serve(path: path, logger: Logger(label: "test"))
            held.objects = [server]
        }
        #expect(try ControlClient.send(["query": "state"], to: path)["state"] == .string("active"))
        #expect(try ControlClient.send(["lifecycle": "home"], to: path)["state"] == .string("suspended"))
        try OffLoopReleaseTests.onLoop(thread) { held.objects = [] }
        #expect(access(path, F_OK) != 0, "releasing the server closed and removed the socket")
    }

    /// The standard vocabulary on an app of one's own: held events merge on
    /// foreground, the socket's counters and extra stats reach `stats`, and
    /// a bad request changes nothing.
    @Test func theStandardVocabularyDrivesAnAppOfYourOwn() throws {
        let thread = try LoopThread.start()
        defer { try? thread.stopAndJoin() }
        let directory = TemporaryDirectory()
        let path = directory.file("vocabulary.sock")
        let held = Held()
        let delivered = Locked<[String]>([])
        try OffLoopReleaseTests.onLoop(thread) {
            let application = try Application(loop: thread.loop)
            try application.notifications.addObserver { note in delivered.mutate { $0.append("\(note)") } }
            let responder = ControlResponder(application: application)
            responder.extraStats = { ["mine": 7] }
            held.objects = [try responder.serve(path: path, logger: Logger(label: "test"))]
            try application.perform(.launch)
        }
        for request: JSONValue in [["lifecycle": "home"], ["system": ["orientation": "faceUp"]],
                                   ["system": ["orientation": "landscapeLeft"]], ["lifecycle": "foreground"]] {
            #expect(try ControlClient.send(request, to: path)["ok"] == .bool(true))
        }
        #expect(delivered.value == [#"orientationDidChange {"orientation":"landscapeLeft"} (merged from 2)"#])
        let refused = try ControlClient.send(["lifecycle": "fly"], to: path)
        #expect(refused["ok"] == .bool(false))
        #expect(try ControlClient.send(["query": "state"], to: path)["state"] == .string("active"))
        let stats = try ControlClient.send(["query": "stats"], to: path)
        #expect(stats["mine"] == .number(7) && stats["refusedPeers"] == .number(0))
        try OffLoopReleaseTests.onLoop(thread) { held.objects = [] }
    }

    /// SystemdSupervision and JobControl attach to any application, with
    /// the caller's status line and reload.
    @Test func supervisionAndJobControlAttachToAnyApplication() throws {
        let thread = try LoopThread.start()
        defer { try? thread.stopAndJoin() }
        let directory = TemporaryDirectory()
        let listener = try NotifyListener(path: directory.file("notify.sock"))
        let notifyPath = listener.path
        let reloads = Locked(0)
        let held = Held()
        try OffLoopReleaseTests.onLoop(thread) {
            let application = try Application(loop: thread.loop)
            let supervision = try SystemdSupervision(application: application, notifier: try SystemdNotifier(socketName: notifyPath),
                                                     watchdog: nil, logger: Logger(label: "test"), handlesHangup: false,
                                                     status: { "mine: \(application.state.rawValue)" },
                                                     reload: { reloads.mutate { $0 += 1 } })
            try application.perform(.launch)
            supervision.ready()
            supervision.reload()
            held.objects = [application, supervision]
        }
        let messages = listener.until("READY=1", timeout: 5)
        #expect(messages.contains { $0.contains("STATUS=mine: active") }, "\(messages)")
        #expect(reloads.value == 1)
        try OffLoopReleaseTests.onLoop(thread) {
            (held.objects[1] as! SystemdSupervision).remove()
            held.objects = []
        }
    }
}

/// Threads started inside `ServiceSignals.blockingSignals` block the
/// service's signals; the calling thread's mask is restored.
@Suite(.ownThread, .timeLimit(.minutes(1))) struct ServiceSignalsTests {
    @Test func threadsStartedInsideBlockTheServiceSignals() throws {
        let blockedInThread = Locked<[Int32: Bool]>([:])
        var before = sigset_t()
        pthread_sigmask(SIG_SETMASK, nil, &before)
        let thread = ServiceSignals.blockingSignals(in: { () -> Thread in
            let thread = Thread {
                var mask = sigset_t()
                pthread_sigmask(SIG_SETMASK, nil, &mask)
                for number in ServiceSignals.handled {
                    let blocked = sigismember(&mask, number) == 1
                    blockedInThread.mutate { $0[number] = blocked }
                }
            }
            thread.start()
            return thread
        })
        #expect(eventually(timeout: 5) { blockedInThread.value.count == ServiceSignals.handled.count || thread.isFinished })
        #expect(eventually(timeout: 5) { blockedInThread.value.count == ServiceSignals.handled.count })
        #expect(blockedInThread.value.values.allSatisfy { $0 }, "\(blockedInThread.value)")
        var after = sigset_t()
        pthread_sigmask(SIG_SETMASK, nil, &after)
        for number in ServiceSignals.handled { #expect(sigismember(&after, number) == sigismember(&before, number), "signal \(number)") }
    }
}
