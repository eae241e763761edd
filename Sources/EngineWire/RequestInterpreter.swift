import AppLifecycle
@_spi(Testing) import MainLoop
import MainLoopJSON
import SystemNotifications

/// Carries out the request vocabulary (docs/BEHAVIOUR.md §6) for one
/// application: lifecycle commands, system events, input, app actions and
/// queries. It is the one interpreter of that vocabulary: the control
/// socket (`ControlResponder`), `mainloop run` and the scenario replay all
/// hand it their requests, so a request means the same thing from each.
///
/// With an ``ObservationRecorder`` it also acts as the replay app does:
/// a refused lifecycle command or app action records a `rejected` line, and
/// the app actions' timers, tasks and handlers record their lines. Without
/// one (your own service, whose delegate is its own) app actions are
/// refused: they are the recorded app's, not yours.
///
/// Loop thread only.
public final class RequestInterpreter {
    /// Why a request did not take effect. Nothing changed, except the
    /// `rejected` line a ``rejected(_:)`` records.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// The application refused a lifecycle command or an app action in
        /// its state (a `rejected` line was recorded, when there is a recorder).
        case rejected(String)
        /// The request does not fit: a system event its kind's rule
        /// refuses or that is over a limit, an app action with no recorder.
        case refused(String)
        /// The loop failed while delivering it.
        case loopFailed(String)

        public var description: String {
            switch self {
            case .rejected(let reason), .refused(let reason), .loopFailed(let reason): return reason
            }
        }
    }

    /// What a request did.
    public enum Outcome: Equatable {
        /// A lifecycle command was applied; the app is now in this state.
        case lifecycle(AppState)
        /// A system event was posted (delivered, held or found unchanged).
        case posted
        /// Input was delivered; `discarded` when the app was not active.
        case input(discarded: Bool)
        /// An app action was carried out.
        case action
        /// A query's answer.
        case answer(JSONObject)
    }

    /// The application the requests drive.
    public let application: Application
    /// Where the app actions' lines and `rejected` lines go; nil: app
    /// actions are refused and nothing is recorded.
    public let recorder: ObservationRecorder?
    /// Whether a background task's expiration handler ends its task
    /// (a scenario's `expirationHandlerEndsTask`; true by default).
    public var expirationHandlerEndsTask = true
    /// More counters for a `stats` answer (a server's, an output queue's).
    public var extraStats: () -> JSONObject = { JSONObject() }
    /// The metrics as Prometheus text for the `metrics` query; nil: the
    /// query is answered with an error that says so.
    public var metricsText: (() -> String)?
    /// Called with the requests the application's input observers do not
    /// see, as they are carried out: every app action (before it runs,
    /// rejected or not) and every lifecycle command the application
    /// rejected (before its `rejected` line). With
    /// ``/AppLifecycle/Application/addInputObserver(_:prepared:)`` it sees every request that
    /// changes something, in order: what a session recorder records.
    public var requestObserver: ((EngineRequest) -> Void)?

    /// The application's notification center, kept: made per event, the
    /// center retained and released the application each time, on the
    /// slow path of an object with weak references.
    private let center: SystemNotificationCenter
    /// Reads the plain `system` lines (``post(eventLine:)``). Unchecked
    /// exclusivity: changed only inside ``post(eventLine:)``, before the
    /// event is posted (no user code runs while it is changed). The checks'
    /// cost: the rows of Benchmarks/socket/instructions.sh.
    @exclusivity(unchecked) private var eventLines: SystemEventLineReader
    /// The last `state` answer and what it reports: a query that finds
    /// nothing changed answers with the very same object, so the socket
    /// copies the line it printed for it (a supervisor polls `state`).
    /// Unchecked exclusivity: touched only inside ``answer(_:)`` on the
    /// loop thread, which nothing re-enters while it reads them (the socket
    /// benchmark's state rows).
    @exclusivity(unchecked) private var lastStateSnapshot: EngineStateSnapshot?
    @exclusivity(unchecked) private var lastStateAnswer = JSONObject()

    /// The replay app's handles, which die with the app's run.
    private static let timersByLabel = RunLocalKey<[String: AppTimer]>()
    private static let didEnterBackgroundBlock = RunLocalKey<Duration>()
    private static let registeredScheduledTasks = RunLocalKey<Set<String>>()

    /// An interpreter for `application`. With `recorder` (attached to the
    /// application), it carries out app actions and records `rejected`
    /// lines; it also sets the recorder's `didEnterBackground`, to block the
    /// main thread there when an `onDidEnterBackground` action asked for it.
    public init(application: Application, recorder: ObservationRecorder? = nil) {
        self.application = application
        self.recorder = recorder
        center = application.notifications
        eventLines = SystemEventLineReader(center: center)
        recorder?.didEnterBackground = { application in
            if let block = application[runLocal: Self.didEnterBackgroundBlock] { application.loop.blockMainThread(for: block) }
        }
    }

    /// Carries out one request.
    /// - Throws: ``Failure``, having changed nothing but the `rejected` line.
    public func perform(_ request: EngineRequest) throws(Failure) -> Outcome {
        switch request {
        case .lifecycle(let command): return try perform(command)
        case .system(let json):
            let event: SystemEvent
            do {
                event = try center.decodeEvent(json)
            } catch {
                throw .refused("\(error)")
            }
            return try post(event)
        case .input(let id): return try deliverInput(id)
        case .memoryWarning: return try receiveMemoryWarning()
        case .app(let action): return try perform(action)
        case .query(let query): return .answer(answer(query))
        }
    }

    /// Applies a lifecycle command.
    public func perform(_ command: LifecycleCommand) throws(Failure) -> Outcome {
        do throws(LifecycleError) {
            try application.perform(command)
            return .lifecycle(application.state)
        } catch {
            requestObserver?(.lifecycle(command))
            recorder?.record("rejected", .string(command.rawValue))
            throw .rejected(error.description)
        }
    }

    /// Posts a decoded system event.
    public func post(_ event: SystemEvent) throws(Failure) -> Outcome {
        do {
            try center.post(event)
            return .posted
        } catch {
            throw .refused("\(error)")
        }
    }

    /// What ``post(eventLine:)`` did with a line.
    public enum EventLineResult: Equatable {
        /// The line's event was posted.
        case posted
        /// The line's event was refused (it changed nothing).
        case failed(Failure)
        /// Not a plain `system` line, or its event does not decode: parse
        /// the line and call ``perform(_:)-(EngineRequest)``, which words the error.
        case notAnEventLine
    }

    /// Posts the event of a plain `system` line (``/EngineWire/SystemEventLine``)
    /// from its bytes, with no JSON tree made for it: the control socket's
    /// fast path for event lines. Any other line changes nothing.
    public func post(eventLine line: UnsafeBufferPointer<UInt8>) -> EventLineResult {
        // Read (the reader changes) before posting (user code runs).
        switch eventLines.event(in: line) {
        case .prepared(let prepared): return posting { try center.post(prepared) }
        case .decoded(let event): return posting { try center.post(event) }
        case .unread: return .notAnEventLine
        }
    }

    /// What posting did: posted, or the error that refused it.
    private func posting(_ post: () throws -> Void) -> EventLineResult {
        do {
            try post()
            return .posted
        } catch {
            return .failed(.refused("\(error)"))
        }
    }

    /// Delivers input; it reaches the app only while it is active.
    public func deliverInput(_ id: String) throws(Failure) -> Outcome {
        let discardedBefore = application.discardedInputCount
        do throws(MainLoopError) {
            try application.deliverInput(id)
        } catch {
            throw .loopFailed("the main loop failed: \(error)")
        }
        return .input(discarded: application.discardedInputCount != discardedBefore)
    }

    /// Delivers a memory warning (a `memoryWarning` line, and the
    /// delegate's call when the app runs code).
    public func receiveMemoryWarning() throws(Failure) -> Outcome {
        do throws(MainLoopError) {
            try application.receiveMemoryWarning()
        } catch {
            throw .loopFailed("the main loop failed: \(error)")
        }
        return .posted
    }

    /// The answer to a query: `{"ok": true, ...}`, or an error object.
    public func answer(_ query: EngineQuery) -> JSONObject {
        switch query {
        case .state:
            let snapshot = EngineStateSnapshot(application: application)
            if lastStateSnapshot == snapshot { return lastStateAnswer }
            lastStateSnapshot = snapshot
            lastStateAnswer = snapshot.reply
            return lastStateAnswer
        case .metrics:
            guard let metricsText else { return EngineQueries.reply(.metrics, application: application) }
            return ["ok": true, "text": .string(metricsText())]
        case .stats:
            return statsAnswer(adding: JSONObject())
        case .values:
            return EngineQueries.reply(.values, application: application)
        }
    }

    /// The `stats` answer with ``extraStats`` and then `more` (a
    /// transport's own counters).
    public func statsAnswer(adding more: JSONObject) -> JSONObject {
        var stats = extraStats()
        for (key, value) in more { stats[key] = value }
        return EngineQueries.reply(.stats, application: application, extraStats: stats)
    }

    // MARK: App actions

    /// Carries out an app action as the replay app does. On a live loop
    /// `blockMainThread` blocks the thread for its time (the control socket
    /// refuses it: ``RequestContext/controlSocket``).
    public func perform(_ action: AppAction) throws(Failure) -> Outcome {
        guard let recorder else {
            throw .refused("'app' actions need an observation recorder (the app they act for); this service has none")
        }
        requestObserver?(.app(action))
        do {
            try carryOut(action, recorder: recorder)
            return .action
        } catch {
            recorder.record("rejected", .string(action.name))
            throw .rejected("\(error)")
        }
    }

    private func carryOut(_ action: AppAction, recorder: ObservationRecorder) throws {
        switch action {
        case .beginBackgroundTask(let name):
            let application = self.application
            let endsTask = expirationHandlerEndsTask
            var token = BackgroundTaskToken.invalid
            token = try application.beginBackgroundTask(name: name) { [recorder] in
                recorder.record("expired", .string(name))
                // The expiration handler ends its own task (BEHAVIOUR.md §7); the
                // task can only be open here, so this cannot fail.
                if endsTask { try? application.endBackgroundTask(token) }
            }
            guard token.isValid else { throw LifecycleError.appNotRunning(action: "beginBackgroundTask", state: application.state) }
        case .endBackgroundTask(let name):
            guard let token = application.openBackgroundTask(named: name) else {
                throw LifecycleError.unknownBackgroundTask(.invalid)
            }
            try application.endBackgroundTask(token)
        case .post(let label):
            try application.post { [recorder] in recorder.record("task", .string(label)) }
        case .timerAfter(let label, let delay):
            try schedule(label, recorder: recorder) { application, record throws(LifecycleError) in
                try application.scheduleTimer(after: delay, record)
            }
        case .timerEvery(let label, let interval):
            try schedule(label, recorder: recorder) { application, record throws(LifecycleError) in
                try application.scheduleTimer(after: interval, repeating: interval, record)
            }
        case .cancelTimer(let label):
            try requireAppCode("cancelTimer")
            var timers = application[runLocal: Self.timersByLabel] ?? [:]
            // Cancelling an unknown label is a no-op, like invalidating a timer twice.
            timers.removeValue(forKey: label)?.cancel()
            try application.setRunLocal(timers, for: Self.timersByLabel)
        case .startService(let mode):
            try application.startService(BackgroundMode(mode))
        case .stopService(let mode):
            try application.stopService(BackgroundMode(mode))
        case .setKeepAliveTimeout(let timeout):
            try application.setKeepAliveTimeout(timeout) { [recorder] in recorder.record("keepAlive", true) }
        case .scheduleLocalNotification(let label, let delay):
            try application.scheduleLocalNotification(label, after: delay)
        case .blockMainThread(let duration):
            try requireAppCode("blockMainThread")
            application.loop.blockMainThread(for: duration)
        case .onDidEnterBackgroundBlock(let duration):
            try application.setRunLocal(duration, for: Self.didEnterBackgroundBlock)
        case .submitScheduledTask(let request):
            try registerIfNeeded(request.identifier, recorder: recorder)
            try application.submitScheduledTask(request)
        case .cancelScheduledTask(let identifier):
            try requireAppCode("cancelScheduledTask")
            application.cancelScheduledTask(identifier: identifier)
        case .completeScheduledTask(let identifier, let success):
            try requireAppCode("completeScheduledTask")
            guard let task = application.runningScheduledTask, task.identifier == identifier else {
                throw LifecycleError.scheduledTaskNotRunning(identifier)
            }
            task.setTaskCompleted(success: success)
        }
    }

    /// The replay app registers each identifier it submits, once a run:
    /// its launch handler prints a `scheduledTask` line, and its expiration
    /// handler a `scheduledTaskExpired` line, completing the task
    /// (unsuccessfully) when ``expirationHandlerEndsTask`` is true.
    private func registerIfNeeded(_ identifier: String, recorder: ObservationRecorder) throws(LifecycleError) {
        var registered = application[runLocal: Self.registeredScheduledTasks] ?? []
        guard !registered.contains(identifier) else { return }
        let endsTask = expirationHandlerEndsTask
        try application.registerScheduledTask(identifier: identifier) { [recorder] task in
            recorder.record("scheduledTask", .string(identifier))
            task.expirationHandler = { [recorder, unowned task] in
                recorder.record("scheduledTaskExpired", .string(identifier))
                if endsTask { task.setTaskCompleted(success: false) }
            }
        }
        registered.insert(identifier)
        try application.setRunLocal(registered, for: Self.registeredScheduledTasks)
    }

    /// The library checks its own actions; these are the replay app's.
    private func requireAppCode(_ action: String) throws(LifecycleError) {
        guard application.state.runsAppCode else { throw .appNotRunning(action: action, state: application.state) }
    }

    /// Schedules the timer `label` (replacing one of the same label) that
    /// records a `timer` line when it fires.
    private func schedule(_ label: String, recorder: ObservationRecorder,
                          _ make: (Application, @escaping () -> Void) throws(LifecycleError) -> AppTimer) throws(LifecycleError) {
        var timers = application[runLocal: Self.timersByLabel] ?? [:]
        let timer = try make(application) { [recorder] in recorder.record("timer", .string(label)) }
        timers.removeValue(forKey: label)?.cancel()
        timers[label] = timer
        try application.setRunLocal(timers, for: Self.timersByLabel)
    }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension RequestInterpreter: Sendable {}
