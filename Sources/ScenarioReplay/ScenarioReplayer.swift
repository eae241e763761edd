import AppLifecycle
import EngineWire
@_spi(Testing) import MainLoop
import MainLoopJSON
import SystemNotifications

/// An optional bound on one replay. Replay itself sets none (BEHAVIOUR.md §7,
/// revision 3: a scenario of a million inputs prints a million lines, in
/// bounded memory, since lines are streamed); a caller that replays
/// untrusted mutants (a fuzzer, a test) may stop a replay after
/// `maxObservations` lines, with an error.
public struct ReplayLimits: Sendable, Equatable {
    /// The most observation lines before the replay stops with an error;
    /// nil (the default) for no bound.
    public var maxObservations: Int?
    /// No bound, or at most `maxObservations` lines.
    public init(maxObservations: Int? = nil) { self.maxObservations = maxObservations }
}

/// What a replay produced: the observation lines, and the engine's
/// counters per kind at the end (for accounting checks).
public struct ReplayResult: Sendable {
    /// The BEHAVIOUR.md §7 lines, in order.
    public let observations: [JSONObject]
    /// Counters per kind, in slot order, when the replay ended.
    public let statistics: [(kind: NotificationKind, counters: NotificationCounters)]
    /// The app's state when the replay ended.
    public let finalState: AppState
}

/// Replays a scenario on the library's real main loop (deterministic mode),
/// application and notification engine, and returns the BEHAVIOUR.md §7
/// observation lines. There is no separate model: the steps go through the
/// same API a service uses, and every error the library reports reaches the
/// output (a `rejected` line) or fails the replay with its step.
public enum ScenarioReplayer {
    /// Runs `scenario` and returns its observations in order (held in
    /// memory: use ``stream(_:limits:to:)`` for a scenario of any size).
    /// - Throws: ``ScenarioError`` when the set-up or a step does not fit
    ///   the engine (checked before any step runs where possible), or the
    ///   replay passes its limits.
    public static func run(_ scenario: Scenario, limits: ReplayLimits = ReplayLimits()) throws(ScenarioError) -> [JSONObject] {
        try replay(scenario, limits: limits).observations
    }

    /// Runs `scenario` and returns its observations and the engine's counters.
    public static func replay(_ scenario: Scenario, limits: ReplayLimits = ReplayLimits()) throws(ScenarioError) -> ReplayResult {
        var observations: [JSONObject] = []
        let (statistics, finalState) = try replay(scenario, limits: limits) { line in
            observations.append(line)
            return true
        }
        return ReplayResult(observations: observations, statistics: statistics, finalState: finalState)
    }

    /// Runs `scenario`, handing each observation to `sink` as it happens,
    /// so memory does not grow with the output. `sink` returns false to end
    /// the replay early (a check that found a difference); the replay then
    /// returns normally.
    /// - Returns: the app's state when the replay ended.
    @discardableResult
    public static func stream(_ scenario: Scenario, limits: ReplayLimits = ReplayLimits(),
                              to sink: @escaping (JSONObject) -> Bool) throws(ScenarioError) -> AppState {
        try replay(scenario, limits: limits, sink: sink).finalState
    }

    private static func replay(_ scenario: Scenario, limits: ReplayLimits, sink: @escaping (JSONObject) -> Bool)
        throws(ScenarioError) -> (statistics: [(kind: NotificationKind, counters: NotificationCounters)], finalState: AppState) {
        let loop: MainRunLoop
        do {
            loop = try MainRunLoop(deterministic: true)
        } catch {
            throw ScenarioError(problem: "the main loop failed: \(error)")
        }
        defer {
            // Frees the loop's libevent objects now rather than at deinit;
            // it cannot fail here (the loop is idle and not yet shut down).
            try? loop.shutdown()
        }
        let session = try ReplaySession(scenario: scenario, loop: loop, limits: limits, sink: sink)
        try session.run()
        return (session.application.notifications.statistics, session.application.state)
    }
}

/// One replay: the loop, the application and the replay app.
/// A replay run one step at a time, by whoever holds the thread: each
/// ``step()`` advances the deterministic loop to the next step's instant,
/// performs it and runs what it made ready, exactly as
/// ``ScenarioReplayer/replay(_:limits:)`` does in one call (both run the same
/// session), so a replay can be stepped from another loop's callbacks (a
/// GLib idle source, say) and still print the same lines.
public final class ScenarioStepper {
    private let loop: MainRunLoop
    private let session: ReplaySession
    private var next = 0
    private var finished = false

    /// Prepares `scenario`'s replay; `sink` gets each observation line
    /// (return false to stop).
    /// - Throws: ``ScenarioError`` when the scenario cannot start.
    public init(_ scenario: Scenario, limits: ReplayLimits = ReplayLimits(),
                sink: @escaping (JSONObject) -> Bool) throws(ScenarioError) {
        do {
            loop = try MainRunLoop(deterministic: true)
        } catch {
            throw ScenarioError(problem: "the main loop failed: \(error)")
        }
        session = try ReplaySession(scenario: scenario, loop: loop, limits: limits, sink: sink)
    }

    deinit {
        // The loop is idle here (a step is never in progress in a deinit).
        try? loop.shutdown()
    }

    /// Runs the next step; false once the replay is over (then it does nothing).
    /// - Throws: ``ScenarioError`` when a step fails; the replay is then over.
    public func step() throws(ScenarioError) -> Bool {
        guard !finished else { return false }
        do {
            let more = try session.runStep(next)
            next += 1
            finished = !more
            return more
        } catch {
            finished = true
            throw error
        }
    }

    /// The application's state now.
    public var state: AppState { session.application.state }
}

private final class ReplaySession {
    /// Where the lines go, and why the replay ended early, if it did.
    final class Log {
        let sink: (JSONObject) -> Bool
        var count = 0
        /// The limit was reached (an error).
        var overflowed = false
        /// The sink asked to stop (not an error).
        var stopped = false
        init(sink: @escaping (JSONObject) -> Bool) { self.sink = sink }
    }

    let scenario: Scenario
    let loop: MainRunLoop
    let limits: ReplayLimits
    let application: Application
    let recorder: ObservationRecorder
    /// Carries out the steps, as it carries out a live service's requests.
    let interpreter: RequestInterpreter
    let log: Log
    /// System events, decoded by the engine's rules at set-up, by step index.
    private var systemEvents: [Int: SystemEvent] = [:]

    init(scenario: Scenario, loop: MainRunLoop, limits: ReplayLimits,
         sink: @escaping (JSONObject) -> Bool) throws(ScenarioError) {
        self.scenario = scenario
        self.loop = loop
        self.limits = limits
        // Replay sets no service limits: the number of subjects (and their
        // sizes) is bounded by the scenario's own size (BEHAVIOUR.md §7, revision 3).
        do {
            application = try Application(loop: loop, configuration: scenario.configuration, limits: .unlimited)
        } catch {
            throw ScenarioError(problem: "the replay cannot start: \(error)")
        }
        let log = Log(sink: sink)
        self.log = log
        recorder = ObservationRecorder(timestamp: { ["at": SpecTime.json(loop.now)] }, sink: { [log] line in
            guard !log.stopped, !log.overflowed else { return }
            if let limit = limits.maxObservations, log.count >= limit {
                log.overflowed = true
                // Ends the `advance` in progress; the replay then reports it.
                loop.stop()
                return
            }
            log.count += 1
            if !log.sink(line) {
                log.stopped = true
                loop.stop()
            }
        })
        interpreter = RequestInterpreter(application: application, recorder: recorder)
        interpreter.expirationHandlerEndsTask = scenario.expirationHandlerEndsTask
        let center = application.notifications
        for (index, rule) in scenario.customKinds.enumerated() {
            do throws(NotificationCenterError) {
                try center.register(rule)
            } catch {
                throw ScenarioError(problem: "config: customKinds[\(index)]: \(error)")
            }
        }
        do throws(NotificationCenterError) {
            try recorder.attach(to: application)
        } catch {
            throw ScenarioError(problem: "the replay app cannot observe the engine: \(error)")
        }
        for event in try InitialValues.events(scenario.initial, center: center) {
            do throws(NotificationCenterError) {
                try center.setInitialValue(event)
            } catch {
                let key = event.kind.name
                throw ScenarioError(problem: "initial '\(key)': \(error)")
            }
        }
        for (index, step) in scenario.steps.enumerated() {
            guard case .system(let json) = step.request else { continue }
            do throws(NotificationCenterError) {
                let event = try center.decodeEvent(json)
                try center.validate(event)
                systemEvents[index] = event
            } catch {
                throw ScenarioError(stepIndex: index, problem: error.description)
            }
        }
    }

    func run() throws(ScenarioError) {
        var next = 0
        while try runStep(next) { next += 1 }
    }

    /// Runs step `index` (or, one past the last, what is due by the last
    /// step's instant); false when the replay is over.
    func runStep(_ index: Int) throws(ScenarioError) -> Bool {
        guard !log.stopped else { return false }
        guard index < scenario.steps.count else {
            // Everything due at or before the last step's instant runs.
            if index == scenario.steps.count, let last = scenario.steps.last {
                try drive(index - 1) { () throws(MainLoopError) in try loop.advance(to: SpecTime.instant(last.at)) }
            }
            return false
        }
        let step = scenario.steps[index]
        // What comes due up to and at this instant runs before the step;
        // a step behind the clock (a blocked callback moved it on) runs
        // at the clock's time, after what is due by then (BEHAVIOUR.md §7).
        // A step in the previous one's turn runs right after it.
        if !step.sameTurn {
            try drive(index) { () throws(MainLoopError) in try loop.advance(to: SpecTime.instant(step.at)) }
        }
        try perform(step, index: index)
        let nextInSameTurn = index + 1 < scenario.steps.count && scenario.steps[index + 1].sameTurn
        if !nextInSameTurn {
            try drive(index) { () throws(MainLoopError) in try loop.runUntilIdle() }
        }
        return true
    }

    /// Runs the loop, turning its failures and the replay limit into errors.
    private func drive(_ index: Int, _ body: () throws(MainLoopError) -> Void) throws(ScenarioError) {
        do {
            try body()
        } catch {
            throw ScenarioError(stepIndex: index, problem: "the main loop failed: \(error)")
        }
        if log.overflowed {
            throw ScenarioError(stepIndex: index,
                                problem: "the replay stopped after \(log.count) observations (the caller's limit)")
        }
    }

    /// Performs a step through the interpreter. A rejected lifecycle
    /// command or app action is a `rejected` line (the interpreter records
    /// it); anything else that fails fails the replay with its step.
    private func perform(_ step: Scenario.Step, index: Int) throws(ScenarioError) {
        if case .query = step.request { throw ScenarioError(stepIndex: index, problem: "'query' is not a scenario step") }
        do throws(RequestInterpreter.Failure) {
            if case .system = step.request {
                // Decoded and checked at set-up, before any step ran.
                _ = try interpreter.post(systemEvents[index]!)
            } else {
                _ = try interpreter.perform(step.request)
            }
        } catch {
            if case .rejected = error { return }
            throw ScenarioError(stepIndex: index, problem: error.description)
        }
    }
}
