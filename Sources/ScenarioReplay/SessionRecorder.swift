import AppLifecycle
import EngineWire
import Glibc
import MainLoop
import MainLoopJSON
import ServiceLogging
import SystemNotifications

/// Records what reaches an application, as it happens, into a recording
/// that `mainloop replay` replays (BEHAVIOUR.md §7, "Recordings"): every
/// input from every path (``/AppLifecycle/Application/addInputObserver(_:prepared:)``), and, with
/// an interpreter, its app actions and the lifecycle commands the app
/// rejected (``/EngineWire/RequestInterpreter/requestObserver``), each at its instant
/// on the loop's clock, after a first line with the configuration, the
/// custom kinds and the system's values when recording began.
///
/// ```swift
/// let loop = try MainRunLoop(clockReading: .perCallback)
/// let app = try Application(loop: loop)
/// let recorder = try SessionRecorder(application: app, path: "/tmp/session.jsonl") { problem in
///     print("recording stopped: \(problem)")
/// }
/// try app.perform(.launch)
/// // ... the loop runs, the sources post, the socket takes requests ...
/// recorder.stop()
/// ```
///
/// Each line is handed to a writer thread (a
/// ``/ServiceLogging/BoundedOutputPump``), so the loop never waits for the
/// disk, and is written whole: a process killed (SIGKILL included) leaves
/// every step the writer had written before it (lines still queued are
/// lost), and a replay names the line where the recording was cut off. The recording is
/// bounded: at `maxBytes` it writes an end line that says so and records
/// nothing more. A write that fails (a full disk) is reported once, through
/// `onProblem`, and recording stops; the application goes on either way.
///
/// For a replay to print what the live session printed, the loop reads its
/// clock per callback (``/MainLoop/ClockReading/perCallback``): the recorder refuses
/// a loop that does not. Loop thread only.
public final class SessionRecorder {
    /// The version of the recording format this writes and reads.
    public static let formatVersion = 1
    /// The bytes kept for the end line (`{"end":"sizeLimit","maxBytes":N}`).
    static let endLineRoom = 64
    /// The default size limit: 64 MiB.
    public static let defaultMaxBytes = 64 << 20

    /// Why recording ended (the end line's `end`).
    enum Ending: String, Sendable {
        /// ``stop()`` was called.
        case stopped
        /// The recording reached its size limit.
        case sizeLimit
    }

    private let application: Application
    private let loop: MainRunLoop
    private let center: SystemNotificationCenter
    private let pump: BoundedOutputPump
    private let descriptor: Int32
    private let maxBytes: Int
    private let onProblem: (String) -> Void
    /// The loop instant that is 0 in the recording.
    public let origin: LoopInstant
    // The fields written for every step are `@exclusivity(unchecked)`:
    // loop thread only, never re-entered while a step is written (the
    // runtime's checks were a third of a recorded event's cost,
    // scripts/service-instructions.sh events with RECORD=1).
    @exclusivity(unchecked) private var bytesWritten = 0
    @exclusivity(unchecked) private var ended = false
    private var inputToken: Int?
    /// Held strongly: a weak reference would put every retain of the
    /// interpreter (one per socket event line) on the slow path.
    private var interpreter: RequestInterpreter?
    /// How each kind's events are written, by the kind's slot.
    @exclusivity(unchecked) private var writingBySlot: [KindWriting?] = []
    /// The loop's callback count at the last step, and how many were recorded.
    @exclusivity(unchecked) private var lastTurn: UInt64 = 0
    @exclusivity(unchecked) private var recordedSteps = 0
    /// The line being written, its memory reused from one step to the next.
    @exclusivity(unchecked) private var line = RecordingLine()

    /// Starts recording `application` into a new file at `path` (created
    /// with mode 0600, replaced if it is a regular file), writing its first
    /// line now. Attach it before the first input (before the launch) so
    /// the recording starts from the values the application starts from.
    /// - Parameters:
    ///   - application: the application whose inputs are recorded.
    ///   - path: the recording's file.
    ///   - origin: the loop instant that is 0 in the recording (now, by default).
    ///   - interpreter: the interpreter that carries out the app's requests,
    ///     when there is one: its app actions and rejected commands are recorded too.
    ///   - expirationHandlerEndsTask: the recorded app's choice (the scenario's config key).
    ///   - maxBytes: the size limit: at least 4 KiB (a smaller one is taken
    ///     as 4 KiB), at most ``ScenarioFile/maxFileBytes``, the largest
    ///     recording a replay reads.
    ///   - onProblem: told once, on the loop thread, when recording stops early or reaches its limit.
    /// - Throws: ``RecordingError`` when the file cannot be made, the loop does
    ///   not read its clock per callback, `maxBytes` is above what a replay
    ///   reads, or the configuration has a setting a scenario cannot state
    ///   (no file is made then).
    public init(application: Application, interpreter: RequestInterpreter? = nil, path: String,
                origin: LoopInstant? = nil,
                expirationHandlerEndsTask: Bool = true, maxBytes: Int = SessionRecorder.defaultMaxBytes,
                onProblem: @escaping (String) -> Void) throws(RecordingError) {
        application.loop.preconditionInLoop()
        guard application.loop.clockReading == .perCallback else {
            throw RecordingError("the loop must read its clock per callback (MainRunLoop(clockReading: .perCallback)) "
                                 + "for the replay to give the live instants")
        }
        // A recording replay would refuse to read is refused now, before
        // the session it would hold is lost.
        guard maxBytes <= ScenarioFile.maxFileBytes else {
            throw RecordingError("a recording's size limit must be at most \(ScenarioFile.maxFileBytes) bytes "
                                 + "(the largest file a replay reads), not \(maxBytes)")
        }
        self.application = application
        loop = application.loop
        center = application.notifications
        self.maxBytes = max(4096, maxBytes)
        self.onProblem = onProblem
        let header = try Self.header(application: application, expirationHandlerEndsTask: expirationHandlerEndsTask)
        descriptor = try Self.create(path)
        pump = BoundedOutputPump(descriptor: descriptor, limitBytes: self.maxBytes + 4096, wakingFrom: application.loop)
        self.origin = origin ?? application.loop.now
        write(header)
        // unowned(unsafe): the observers are removed before the recorder
        // goes (stop(), or deinit), and a checked unowned load costs two
        // atomic operations per recorded event.
        inputToken = application.addInputObserver({ [unowned(unsafe) self] input in self.record(input) },
                                                   prepared: { [unowned(unsafe) self] event in self.record(event) })
        if let interpreter {
            self.interpreter = interpreter
            interpreter.requestObserver = { [unowned(unsafe) self] request in self.record(request) }
        }
    }

    deinit {
        if !ended { finish(.stopped) }
    }

    /// An observation's `at` for the recorded session: seconds since
    /// recording began on the loop's clock (what the replay prints).
    public func at(_ instant: LoopInstant) -> JSONValue { SpecTime.json(.zero + (instant - origin)) }

    /// Whether it still records.
    public var isRecording: Bool { !ended }

    /// Ends the recording: writes its end line and waits up to `limit` for
    /// the writer. Later inputs are not recorded.
    public func stop(within limit: Duration = .seconds(5)) {
        guard !ended else { return }
        finish(.stopped, within: limit)
    }

    private func record(_ input: EngineInput) {
        guard !ended else { return }
        // Written straight to bytes, with no value built: recording costs
        // the event path little (Benchmarks/socket/recording.sh).
        beginStep()
        switch input {
        case .lifecycle(let command):
            line.append(#""lifecycle":"#)
            line.appendString(command.rawValue)
        case .input(let id):
            line.append(#""input":"#)
            line.appendString(id)
        case .memoryWarning:
            line.append(#""memoryWarning":true"#)
        case .system(let event):
            // A kind made from its name carries no slot: the name decides.
            let cached = cachedWriting(slot: event.kind.slot).flatMap { $0.name == event.kind.name ? $0 : nil }
            guard let writing = cached ?? makeWriting(of: event.kind) else { return }
            line.append(writing.prefix)
            writePayload(writing, subject: event.subject, value: event.value, enumIndex: nil)
        }
        endStep()
    }

    /// An event posted in its prepared form (the hot path): its kind's
    /// bytes made once, its value's too when the kind lists its values.
    private func record(_ event: PreparedEvent) {
        guard !ended else { return }
        guard let writing = cachedWriting(slot: Int(event.slot)) ?? makeWriting(of: center.kind(of: event)) else { return }
        beginStep()
        line.append(writing.prefix)
        let subject = writing.isKeyed ? center.subject(of: event) : nil
        if event.value.tag == .enumCase, Int(event.value.bits) < writing.enumValues.count {
            writePayload(writing, subject: subject, value: .null, enumIndex: Int(event.value.bits))
        } else {
            writePayload(writing, subject: subject, value: center.value(of: event), enumIndex: nil)
        }
        endStep()
    }

    /// `PAYLOAD}`: the value, or `{"SUBJECTFIELD":"subject","VALUEFIELD":value}`.
    private func writePayload(_ writing: KindWriting, subject: String?, value: JSONValue, enumIndex: Int?) {
        func writeValue() {
            if let enumIndex {
                line.append(writing.enumValues[enumIndex])
            } else {
                line.appendJSON(value)
            }
        }
        if writing.isKeyed {
            line.append(writing.subjectFieldPrefix)
            line.appendString(subject ?? "")
            line.append(writing.valueFieldPrefix)
            writeValue()
            line.append(UInt8(ascii: "}"))
        } else {
            writeValue()
        }
        line.append(UInt8(ascii: "}"))
    }

    /// How events of a kind are written, made once per kind.
    private final class KindWriting {
        /// The kind's name.
        var name: String
        /// `"system":{"NAME":`
        var prefix: [UInt8]
        var isKeyed: Bool
        /// `{"SUBJECTFIELD":` and `,"VALUEFIELD":` (keyed kinds).
        var subjectFieldPrefix: [UInt8] = []
        var valueFieldPrefix: [UInt8] = []
        /// The JSON text of each listed value, by index.
        var enumValues: [[UInt8]] = []

        init(name: String, prefix: [UInt8], isKeyed: Bool) {
            self.name = name
            self.prefix = prefix
            self.isKeyed = isKeyed
        }
    }

    /// How the events of the kind at `slot` are written, once made.
    private func cachedWriting(slot: Int) -> KindWriting? {
        slot >= 0 && slot < writingBySlot.count ? writingBySlot[slot] : nil
    }

    private func makeWriting(of kind: NotificationKind) -> KindWriting? {
        let rule: CoalescingRule
        let slot: Int
        do throws(NotificationCenterError) {
            rule = try center.rule(for: kind)
            slot = try center.slot(of: kind)
        } catch {
            // An event the engine just accepted has a registered kind.
            stopEarly("a system event could not be written: \(error)")
            return nil
        }
        func json(_ value: JSONValue) -> [UInt8] {
            var bytes: [UInt8] = []
            value.appendJSON(to: &bytes)
            return bytes
        }
        let writing = KindWriting(name: rule.kind.name, prefix: Array(#""system":{"#.utf8) + json(.string(rule.kind.name)) + [UInt8(ascii: ":")],
                                  isKeyed: false)
        if case .subjectAndValue(let subjectField, let valueField, _, _) = rule.eventFormat {
            writing.isKeyed = true
            writing.subjectFieldPrefix = [UInt8(ascii: "{")] + json(.string(subjectField)) + [UInt8(ascii: ":")]
            writing.valueFieldPrefix = [UInt8(ascii: ",")] + json(.string(valueField)) + [UInt8(ascii: ":")]
        }
        writing.enumValues = (rule.enumeratedValues ?? []).map { json(.string($0)) }
        while writingBySlot.count <= slot { writingBySlot.append(nil) }
        writingBySlot[slot] = writing
        return writing
    }

    private func record(_ request: EngineRequest) {
        guard !ended else { return }
        beginStep()
        let (key, body) = RequestEncoder.keyAndBody(request)
        line.appendString(key)
        line.append(UInt8(ascii: ":"))
        line.appendJSON(body)
        endStep()
    }

    /// Starts a step's line: `{"at":SECONDS,`.
    private func beginStep() {
        line.reset()
        line.append(#"{"at":"#)
        line.appendSeconds(nanoseconds: loop.now.nanoseconds &- origin.nanoseconds)
        line.append(UInt8(ascii: ","))
    }

    /// Ends a step's line and writes it. Inputs of one callback (pipelined
    /// socket lines, one read of file events) were applied with nothing
    /// run between them: the step says so.
    private func endStep() {
        let turn = loop.callbackTurn
        if recordedSteps > 0, turn == lastTurn { line.append(#","sameTurn":true"#) }
        lastTurn = turn
        recordedSteps += 1
        line.append(UInt8(ascii: "}"))
        writeLine()
    }

    private func write(_ object: JSONObject) {
        line.reset()
        line.appendJSON(.object(object))
        writeLine()
    }

    /// Writes ``line``, unless the size limit or a failure ends the recording.
    private func writeLine() {
        // Room is kept for the end line.
        guard bytesWritten + line.count + 1 + Self.endLineRoom <= maxBytes else {
            finish(.sizeLimit)
            return
        }
        guard line.withBytes({ pump.write(lineBuffer: $0) }) else {
            stopEarly("writing the recording failed: \(pump.failureErrno.map { String(cString: strerror($0)) } ?? "its queue is full")")
            return
        }
        bytesWritten += line.count + 1
    }

    private func stopEarly(_ problem: String) {
        guard !ended else { return }
        ended = true
        detach()
        onProblem(problem)
        _ = pump.finish(within: .seconds(1))
        close(descriptor)
    }

    private func finish(_ ending: Ending, within limit: Duration = .seconds(5)) {
        ended = true
        detach()
        var end = JSONObject([("end", .string(ending.rawValue))])
        if ending == .sizeLimit { end["maxBytes"] = .number(Double(maxBytes)) }
        line.reset()
        line.appendJSON(.object(end))
        _ = line.withBytes { pump.write(lineBuffer: $0) }
        let unwritten = pump.finish(within: limit)
        if let failure = pump.failureErrno {
            onProblem("writing the recording failed: \(String(cString: strerror(failure)))")
        } else if unwritten > 0 {
            onProblem("the recording's last \(unwritten) bytes were not written in time")
        } else if ending == .sizeLimit {
            onProblem("the recording reached its size limit (\(maxBytes) bytes) and stopped")
        }
        close(descriptor)
    }

    private func detach() {
        if let inputToken { application.removeInputObserver(inputToken) }
        inputToken = nil
        interpreter?.requestObserver = nil
    }

    /// The first line: format version, configuration, custom kinds and
    /// the system's current values.
    static func header(application: Application, expirationHandlerEndsTask: Bool) throws(RecordingError) -> JSONObject {
        let configuration = application.configuration
        let defaults = LifecycleConfiguration()
        guard configuration.minimumKeepAliveTimeout == defaults.minimumKeepAliveTimeout,
              configuration.keepAliveHandlerLimit == defaults.keepAliveHandlerLimit,
              configuration.maxScheduledLocalNotifications == defaults.maxScheduledLocalNotifications
        else {
            throw RecordingError("the configuration sets a keep-alive or local-notification limit, which a scenario "
                                 + "cannot state (BEHAVIOUR.md §7 config)")
        }
        let center = application.notifications
        let standard = Set(CoalescingRule.standard.map(\.kind.name))
        var customKinds: [JSONValue] = []
        var initial = JSONObject()
        for kind in center.kinds {
            let rule: CoalescingRule
            let value: JSONValue
            do throws(NotificationCenterError) {
                rule = try center.rule(for: kind)
                value = try center.currentValue(of: kind)
            } catch {
                throw RecordingError("kind '\(kind.name)': \(error)")
            }
            if !standard.contains(kind.name) {
                do throws(CustomKindError) {
                    customKinds.append(try rule.customKindJSON())
                } catch {
                    throw RecordingError("kind '\(kind.name)' has no custom kind entry: \(error)")
                }
            }
            guard let (key, initialValue) = initialEntry(rule, value) else { continue }
            initial[key] = initialValue
        }
        var config = JSONObject([
            ("backgroundTaskLimit", RequestEncoder.seconds(configuration.backgroundTaskLimit)),
            ("expirationLead", RequestEncoder.seconds(configuration.expirationLead)),
            ("didEnterBackgroundLimit", RequestEncoder.seconds(configuration.didEnterBackgroundLimit)),
            ("appRefreshTaskLimit", RequestEncoder.seconds(configuration.appRefreshTaskLimit)),
            ("processingTaskLimit", RequestEncoder.seconds(configuration.processingTaskLimit)),
            ("backgroundModes", .array(configuration.backgroundModes.map(\.name).sorted().map(JSONValue.string))),
            ("expirationHandlerEndsTask", .bool(expirationHandlerEndsTask)),
        ])
        if !customKinds.isEmpty { config["customKinds"] = .array(customKinds) }
        return JSONObject([("recording", .number(Double(formatVersion))), ("config", .object(config)),
                           ("initial", .object(initial))])
    }

    /// A kind's entry in `initial`, under the name BEHAVIOUR.md §7 gives it;
    /// nil when it is the default (nothing to say).
    private static func initialEntry(_ rule: CoalescingRule, _ value: JSONValue) -> (String, JSONValue)? {
        switch rule.kind.name {
        case "userDefaults":
            guard let object = value.objectValue, !object.isEmpty else { return nil }
            return ("defaults", value)
        case "accessory", "screen":
            guard let object = value.objectValue else { return nil }
            let connected = object.orderedKeys.filter { object[$0]?.boolValue == true }
            guard !connected.isEmpty else { return nil }
            return (rule.kind.name == "accessory" ? "accessories" : "screens", .array(connected.map(JSONValue.string)))
        case "screenMode":
            guard let object = value.objectValue, !object.isEmpty else { return nil }
            return ("screenModes", value)
        default:
            if rule.isKeyed {
                guard let object = value.objectValue, !object.isEmpty else { return nil }
                return (rule.kind.name, value)
            }
            guard value != rule.defaultValue else { return nil }
            return (rule.kind.name, value)
        }
    }

    /// Creates the file: a new regular file, or an existing regular file
    /// replaced; anything else (a FIFO, a device, a symbolic link) refused.
    private static func create(_ path: String) throws(RecordingError) -> Int32 {
        var existing = stat()
        if lstat(path, &existing) == 0, existing.st_mode & S_IFMT != S_IFREG {
            throw RecordingError("\(path) is not a regular file")
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw RecordingError("cannot create \(path): \(String(cString: strerror(errno)))") }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw RecordingError("\(path) is not a regular file")
        }
        guard ftruncate(fd, 0) == 0 else {
            let problem = String(cString: strerror(errno))
            close(fd)
            throw RecordingError("cannot empty \(path): \(problem)")
        }
        return fd
    }
}

/// Why a recording cannot start.
public struct RecordingError: Error, CustomStringConvertible, Sendable {
    /// What is wrong.
    public let problem: String
    public init(_ problem: String) { self.problem = problem }
    public var description: String { problem }
}

@available(*, unavailable)
extension SessionRecorder: Sendable {}
