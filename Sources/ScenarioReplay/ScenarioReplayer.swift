import AppLifecycle
import MainLoop
import MainLoopJSON
import SystemNotifications

/// Replays a scenario on the library's real main loop (deterministic mode),
/// lifecycle engine and notification center, and returns the SPEC §7
/// observation lines. There is no separate model: the steps go through the
/// same APIs a service uses.
public enum ScenarioReplayer {
    /// Runs `scenario` and returns its observations in order.
    /// - Throws: ``ScenarioError`` when a step or initial value does not fit
    ///   its kind (checked before any step runs).
    public static func run(_ scenario: Scenario) throws(ScenarioError) -> [JSONObject] {
        let loop: MainRunLoop
        do {
            loop = try MainRunLoop(deterministic: true)
        } catch {
            throw ScenarioError(problem: "the main loop failed: \(error)")
        }
        defer { try? loop.shutdown() }
        let session = try ReplaySession(scenario: scenario, loop: loop)
        do {
            try session.run()
        } catch {
            throw ScenarioError(problem: "the main loop failed: \(error)")
        }
        return session.observations
    }
}

/// One replay: the loop, the application, the center and the replay app.
private final class ReplaySession {
    let scenario: Scenario
    let loop: MainRunLoop
    let application: Application
    let center: SystemNotificationCenter
    let app: ObservingAppDelegate
    /// The observation lines, in order (a box the sink can append to).
    private final class Log { var lines: [JSONObject] = [] }
    private let log = Log()
    var observations: [JSONObject] { log.lines }
    /// System events, decoded by the center's rules at setup, by step index.
    private var systemEvents: [Int: SystemEvent] = [:]
    /// Open tasks by name, oldest first (a name may be reused).
    private var tasksByName: [String: [BackgroundTaskToken]] = [:]
    private var timersByLabel: [String: AppTimer] = [:]

    init(scenario: Scenario, loop: MainRunLoop) throws(ScenarioError) {
        self.scenario = scenario
        self.loop = loop
        application = Application(loop: loop, configuration: scenario.configuration)
        do {
            center = try SystemNotificationCenter(application: application)
        } catch {
            throw ScenarioError(problem: "the main loop failed: \(error)")
        }
        app = ObservingAppDelegate(timestamp: { ["at": .number(loop.now.seconds)] }, sink: { [log] in log.lines.append($0) })
        let initialEvents = try InitialValues.events(scenario.initial, customKinds: scenario.customKinds.map(\.rule))
        do throws(NotificationCenterError) {
            for custom in scenario.customKinds { try center.register(custom.rule) }
            try app.attach(to: application, center: center)
            for event in initialEvents { try center.setInitialValue(try center.decodeEvent(event)) }
        } catch {
            throw ScenarioError(problem: "initial: \(error)")
        }
        for (index, step) in scenario.steps.enumerated() {
            guard case .system(let json) = step.action else { continue }
            do throws(NotificationCenterError) {
                systemEvents[index] = try center.decodeEvent(json)
            } catch {
                throw ScenarioError(stepIndex: index, problem: error.description)
            }
        }
    }

    func run() throws(MainLoopError) {
        for (index, step) in scenario.steps.enumerated() {
            // What comes due up to and at this instant runs before the step.
            try loop.advance(to: instant(step.at))
            perform(step, index: index)
            try loop.runUntilIdle()
        }
        // Everything due at or before the last step's instant runs.
        if let last = scenario.steps.last { try loop.advance(to: instant(last.at)) }
    }

    private func instant(_ seconds: Double) -> LoopInstant { .zero + .seconds(fractional: seconds) }

    private func perform(_ step: Scenario.Step, index: Int) {
        switch step.action {
        case .lifecycle(let command):
            do { try application.perform(command) } catch { app.record("rejected", .string(command.rawValue)) }
        case .system:
            // Through the loop's system-priority channel, like any source.
            try? center.post(systemEvents[index]!)
        case .input(let id):
            try? application.deliverInput(id)
        case .app(let action):
            guard application.state.runsAppCode, perform(action) else {
                app.record("rejected", .string(action.name))
                return
            }
        }
    }

    /// Carries out an app action; false when the library rejected it.
    private func perform(_ action: AppAction) -> Bool {
        do {
            switch action {
            case .beginBackgroundTask(let name):
                var token = BackgroundTaskToken.invalid
                token = try application.beginBackgroundTask(name: name) { [unowned self] in
                    self.app.record("expired", .string(name))
                    if self.scenario.expirationHandlerEndsTask { self.endTask(named: name, token: token) }
                }
                guard token.isValid else { return false }
                tasksByName[name, default: []].append(token)
            case .endBackgroundTask(let name):
                guard let token = tasksByName[name]?.first else { return false }
                endTask(named: name, token: token)
            case .post(let label):
                try application.post { [unowned self] in self.app.record("task", .string(label)) }
            case .timerAfter(let label, let seconds):
                timersByLabel[label]?.cancel()
                timersByLabel[label] = try application.scheduleTimer(after: .seconds(fractional: seconds)) { [unowned self] in
                    self.app.record("timer", .string(label))
                }
            case .timerEvery(let label, let seconds):
                timersByLabel[label]?.cancel()
                let interval = Duration.seconds(fractional: seconds)
                timersByLabel[label] = try application.scheduleTimer(after: interval, repeating: interval) { [unowned self] in
                    self.app.record("timer", .string(label))
                }
            case .cancelTimer(let label):
                timersByLabel.removeValue(forKey: label)?.cancel()
            case .startService(let mode):
                try application.startService(BackgroundMode(mode))
            case .stopService(let mode):
                try application.stopService(BackgroundMode(mode))
            case .setKeepAliveTimeout(let seconds):
                try application.setKeepAliveTimeout(.seconds(fractional: seconds)) { [unowned self] in
                    self.app.record("keepAlive", true)
                }
            case .scheduleLocalNotification(let label, let seconds):
                try application.scheduleLocalNotification(label, after: .seconds(fractional: seconds))
            case .blockMainThread(let seconds):
                loop.blockMainThread(for: .seconds(fractional: seconds))
            case .onDidEnterBackgroundBlock(let seconds):
                app.didEnterBackgroundBlock = .seconds(fractional: seconds)
            }
            return true
        } catch {
            return false
        }
    }

    private func endTask(named name: String, token: BackgroundTaskToken) {
        tasksByName[name]?.removeAll { $0 == token }
        if tasksByName[name]?.isEmpty == true { tasksByName[name] = nil }
        try? application.endBackgroundTask(token)
    }
}
