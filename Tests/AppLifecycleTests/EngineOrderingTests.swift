import AppLifecycle
import Dispatch
import MainLoop
import SystemNotifications
import Testing
import TestSupport

/// The ordering contract (BEHAVIOUR.md §8): every input takes
/// effect in the order it was issued, whatever path it takes.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct EngineOrderingTests {
    final class Recorder: ApplicationDelegate {
        var lines: [String] = []
        var onInput: ((String) -> Void)?
        func application(_ application: Application, didReceiveInput input: String) {
            lines.append("input \(input)")
            onInput?(input)
        }
        func applicationDidEnterBackground(_ application: Application) { lines.append("didEnterBackground") }
    }

    /// From another thread: home, two orientation events, foreground and an
    /// input, posted in that order, take effect in that order on the loop.
    @Test func inputsFromAnotherThreadTakeEffectInArrivalOrder() throws {
        let loop = try MainRunLoop()
        let application = try Application(loop: loop)
        let recorder = Recorder()
        application.delegate = recorder
        try application.notifications.addObserver { recorder.lines.append("\($0.name) \($0.value.jsonText) x\($0.merged)") }
        recorder.onInput = { _ in loop.stop() }
        try application.perform(.launch)
        let poster = application.poster
        DispatchQueue.global().async {
            try! poster.post(.lifecycle(.home))
            try! poster.post(.system(.orientation(.faceUp)))
            try! poster.post(.system(.orientation(.landscapeLeft)))
            try! poster.post(.lifecycle(.foreground))
            try! poster.post(.input("tap"))
        }
        try loop.run()
        #expect(recorder.lines == ["didEnterBackground", #"orientationDidChange "landscapeLeft" x2"#, "input tap"])
    }

    /// Issued from inside a callback (the engine is busy), an event waits
    /// and takes effect right after the current input, before the call that
    /// issued that input returns; a lifecycle command is refused.
    @Test func inputsIssuedFromCallbacksTakeEffectRightAfterTheCurrentOne() throws {
        let loop = try MainRunLoop(deterministic: true)
        let application = try Application(loop: loop)
        let center = application.notifications
        var order: [String] = []
        // Unowned: the application keeps its observers (no cycle, no leak).
        try center.addObserver(for: .orientation) { [unowned application] _ in
            order.append("orientation A")
            try! application.notifications.post(.locale("fr_FR"))
            #expect(throws: LifecycleError.transitionInProgress(command: .home)) { try application.perform(.home) }
        }
        try center.addObserver(for: .orientation) { _ in order.append("orientation B") }
        try center.addObserver(for: .locale) { _ in order.append("locale") }
        try application.perform(.launch)
        try center.post(.orientation(.faceUp))
        #expect(order == ["orientation A", "orientation B", "locale"])
    }

    /// `submit` from a callback queues the command behind the current
    /// transition; its completion reports the outcome.
    @Test func aSubmittedCommandRunsAfterTheCurrentTransition() throws {
        let loop = try MainRunLoop(deterministic: true)
        let application = try Application(loop: loop)
        /// Completions are @Sendable; they run on the loop thread, as this test does.
        final class Log: @unchecked Sendable { var lines: [String] = [] }
        let results = Log()
        application.addLifecycleObserver { [unowned application] callback in
            guard callback == .didBecomeActive, results.lines.isEmpty else { return }
            try! application.submit(.home) { results.lines.append("home → \(try! $0.get())") }
            try! application.submit(.launch) { result in
                if case .failure(let error) = result { results.lines.append("\(error)") }
            }
            results.lines.append("didBecomeActive returns")
        }
        var rejected: [EngineEvent] = []
        application.addEngineObserver { if case .commandRejected = $0 { rejected.append($0) } }
        try application.perform(.launch)
        #expect(results.lines == ["didBecomeActive returns", "home → suspended",
                            "lifecycle command 'launch' is not allowed in state 'suspended'"])
        #expect(rejected == [.commandRejected(.launch, .commandNotAllowed(command: .launch, state: .suspended))])
    }

    /// A poster's input on the loop thread waits in the inbox; an input
    /// issued later on the loop thread takes effect after it.
    @Test func aLoopThreadInputTakesEffectAfterWhatArrivedBefore() throws {
        let loop = try MainRunLoop(deterministic: true)
        let application = try Application(loop: loop)
        var order: [String] = []
        try application.notifications.addObserver { order.append("\($0.name) \($0.value.jsonText)") }
        try application.perform(.launch)
        try application.poster.post(SystemEvent.orientation(.faceUp))
        try application.notifications.post(.orientation(.faceDown))
        #expect(order == [#"orientationDidChange "faceUp""#, #"orientationDidChange "faceDown""#])
    }

    /// An input another thread posted (not yet received by the loop) takes
    /// effect before an input issued later on the loop thread, also when
    /// the later one has to wait in the inbox (the engine is busy, or
    /// inputs wait there): arrival order across threads. Inputs that went
    /// through the inbox on the loop thread used to jump ahead of
    /// arrivals the loop had not received yet.
    @Test func anotherThreadsEarlierInputGoesFirstWhateverPathTheLaterTakes() throws {
        let loop = try MainRunLoop(deterministic: true)
        let application = try Application(loop: loop)
        var order: [String] = []
        application.addInputObserver { input in
            switch input {
            case .lifecycle(let command): order.append(command.rawValue)
            case .system(let event): order.append(event.value.jsonText)
            case .input(let id): order.append(id)
            case .memoryWarning: order.append("memoryWarning")
            }
        }
        try application.perform(.launch)
        let poster = application.poster
        TestThread { try! poster.post(SystemEvent.orientation(.faceUp)) }.join()
        try application.deliverInput("tap")
        TestThread { try! poster.post(SystemEvent.orientation(.faceDown)) }.join()
        try application.receiveMemoryWarning()
        TestThread { try! poster.post(.input("remote")) }.join()
        try application.submit(.home)
        #expect(order == ["launch", #""faceUp""#, "tap", #""faceDown""#, "memoryWarning", "remote", "home"], "\(order)")
    }
}
