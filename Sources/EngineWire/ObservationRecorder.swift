import AppLifecycle
import MainLoop
import MainLoopJSON
import SystemNotifications

/// The BEHAVIOUR.md §7 observation lines of an application: it observes
/// everything and reports each thing as one JSON object (`{"at": ...,
/// "state": "background"}` and so on), in the order it happened.
///
/// The scenario replay records these lines with the manual clock; the
/// `mainloop run` service prints them with the wall clock. ``attach(to:)``
/// makes it the application's delegate (the application holds it), an
/// engine observer and an observer of every kind.
public final class ObservationRecorder: ApplicationDelegate {
    /// Where the lines go: as objects, or as their JSON text.
    private enum Sink {
        case objects((JSONObject) -> Void)
        case text(([UInt8]) -> Void)
    }

    private let timestamp: () -> JSONObject
    private let sink: Sink
    /// Text lines: the line being written (one buffer, reused), and the
    /// timestamp last printed. While `timestamp` returns that same object,
    /// the next line keeps the line's first `timestampTextCount` bytes (`{`
    /// and the timestamp's members); 0 when the line holds something else
    /// (an object line's text). Each new timestamp printed bumps
    /// `timestampGeneration`. Written only by this class, on the loop
    /// thread, and never while a user's code runs (the sink gets a copy):
    /// no access can overlap, so Swift's dynamic exclusivity check, two per
    /// line, is skipped (with it, a line costs four fifths more: the
    /// `observation-line` probe of `compare`).
    @exclusivity(unchecked) private var line: [UInt8] = []
    @exclusivity(unchecked) private var printedTimestamp = JSONObject()
    @exclusivity(unchecked) private var timestampTextCount = 0
    @exclusivity(unchecked) private var timestampGeneration = 0
    /// The fixed parts of standard kinds' lines, printed once per kind.
    @exclusivity(unchecked) private var lineText = NotificationLineText()
    /// Called after the didEnterBackground line, inside the callback (the
    /// replay blocks the main thread there when the app asked for it).
    public var didEnterBackground: ((Application) -> Void)?

    /// Lines as objects.
    /// - Parameters:
    ///   - timestamp: the leading fields of each line (e.g. `at`).
    ///   - sink: receives each line, in order, on the loop thread.
    public init(timestamp: @escaping () -> JSONObject, sink: @escaping (JSONObject) -> Void) {
        self.timestamp = timestamp
        self.sink = .objects(sink)
    }

    /// Lines as their compact JSON text, UTF-8 without a newline: the same
    /// text as printing each object line (`JSONValue.object(line).appendJSON`),
    /// written straight to bytes with no object built per line. For a
    /// service printing many lines a second (`mainloop run`).
    ///
    /// The timestamp's text is printed again only when `timestamp` returns a
    /// different object (`JSONObject.isIdentical(to:)`): return the same
    /// one while it holds (as `mainloop run`'s, once per millisecond).
    /// - Parameters:
    ///   - timestamp: the leading fields of each line (e.g. `at`).
    ///   - lineSink: receives each line's text, in order, on the loop
    ///     thread. The array is the recorder's buffer, reused for the next
    ///     line (keeping it costs a copy then).
    public init(timestamp: @escaping () -> JSONObject, lineSink: @escaping ([UInt8]) -> Void) {
        self.timestamp = timestamp
        self.sink = .text(lineSink)
    }

    /// Makes this the application's delegate and observes the engine and
    /// every notification kind.
    public func attach(to application: Application) throws(NotificationCenterError) {
        application.delegate = self
        // Through the link, not the recorder: the application may outlive
        // the recorder (it keeps its observers).
        link.recorder = self
        let link = self.link
        application.addEngineObserver { event in
            guard let recorder = link.recorder else { return }
            recorder.engine(event)
        }
        try application.notifications.addObserver { notification in
            guard let recorder = link.recorder else { return }
            recorder.record(notification)
        }
    }

    /// The observers' way back to the recorder: they hold the link, the
    /// link does not hold the recorder, and the recorder clears it when it
    /// goes (both on the loop thread: the recorder is bound to it). Not a
    /// weak reference: a weakly referenced object gets a side table, and
    /// every retain and release of it then takes the runtime's slow path
    /// (with the weak load itself, visible in the socket benchmark's events
    /// rate). An observer holds the
    /// recorder strongly while it reports, so a sink that drops the last
    /// other reference cannot free it mid-line.
    private final class Link {
        unowned(unsafe) var recorder: ObservationRecorder?
    }

    private let link = Link()

    deinit { link.recorder = nil }

    /// The line of a delivered notification: the timestamp, then
    /// ``fields(of:)``. An object line is built in one object (the same line
    /// as `record(Self.fields(of:))`, without a second object to copy
    /// from); a text line is written member by member, and printed from the
    /// object instead when a payload key turns out to be one of the line's.
    private func record(_ notification: SystemNotification) {
        let stamp = timestamp()
        if case .text(let sink) = sink {
            if let value = notification.plainValue,
               let pieces = lineText.pieces(slot: notification.slot, rule: notification.rule) {
                startLine(stamp)
                if pieces.checkedGeneration != timestampGeneration {
                    pieces.checkedGeneration = timestampGeneration
                    pieces.keyInTimestamp = stamp[pieces.payloadKey] != nil
                }
                if !pieces.keyInTimestamp {
                    if timestampTextCount > 1 { line.append(UInt8(ascii: ",")) }
                    if pieces.appendMiddle(value, to: &line) {
                        NotificationLineText.appendCount(notification.merged, to: &line)
                        line.append(UInt8(ascii: "}"))
                        return sink(line)
                    }
                }
            }
            let name = notification.name, merged = notification.merged
            // A payload key the line already has (a rule of your own may
            // name one so) makes the object line hold the payload's value
            // in that key's place: that line is printed from the object.
            var clashes = false
            composeLine(stamp) { line in
                JSONObject.appendMembersJSON(to: &line) { member in
                    member(Self.nameKey, .string(name))
                    // The payload's fields straight from the notification: no object built.
                    notification.forEachPayloadField { key, value in
                        if key == Self.nameKey || key == Self.mergedKey || stamp[key] != nil { clashes = true }
                        member(key, value)
                    }
                    member(Self.mergedKey, .number(Double(merged)))
                }
            }
            if !clashes { return sink(line) }
        }
        var object = stamp
        Self.append(notification, notification.payload, to: &object)
        emit(object)
    }

    /// A notification line's own keys, besides the timestamp's: both forms
    /// write them, and a payload that has one takes the object form.
    /// (Computed: a literal each time, with no lazy global to check.)
    static var nameKey: String { "notification" }
    static var mergedKey: String { "merged" }

    /// The BEHAVIOUR.md §7 fields of a delivered notification: name, payload, merged.
    public static func fields(of notification: SystemNotification) -> JSONObject {
        var object = JSONObject()
        append(notification, notification.payload, to: &object)
        return object
    }

    /// Adds ``fields(of:)`` to `object`, after what it holds.
    private static func append(_ notification: SystemNotification, _ payload: JSONObject, to object: inout JSONObject) {
        object.reserveCapacity(object.count + payload.count + 2)
        object[nameKey] = .string(notification.name)
        for (key, value) in payload { object[key] = value }
        object[mergedKey] = .number(Double(notification.merged))
    }

    /// Reports one line made of `key: value`.
    public func record(_ key: String, _ value: JSONValue) {
        record(JSONObject([(key, value)]))
    }

    /// Reports one line with these fields after the timestamp.
    public func record(_ fields: JSONObject) {
        let stamp = timestamp()
        guard case .text(let sink) = sink, !fields.contains(where: { stamp[$0.key] != nil }) else {
            var line = stamp
            line.reserveCapacity(line.count + fields.count)
            for (key, value) in fields { line[key] = value }
            return emit(line)
        }
        writeLine(stamp, to: sink) { fields.appendMembersJSON(to: &$0) }
    }

    /// Hands an object line to the sink, as its text for a text sink.
    private func emit(_ object: JSONObject) {
        switch sink {
        case .objects(let sink): sink(object)
        case .text(let sink):
            timestampTextCount = 0
            line.removeAll(keepingCapacity: true)
            JSONValue.object(object).appendJSON(to: &line)
            sink(line)
        }
    }

    /// Writes a text line (`{`, the timestamp's members, what `members`
    /// appends, `}`) and hands it to `sink`.
    private func writeLine(_ stamp: JSONObject, to sink: ([UInt8]) -> Void, _ members: (inout [UInt8]) -> Void) {
        composeLine(stamp, members)
        sink(line)
    }

    /// Writes a text line into `line`: `{`, the timestamp's members, what
    /// `members` appends, `}`.
    private func composeLine(_ stamp: JSONObject, _ members: (inout [UInt8]) -> Void) {
        startLine(stamp)
        // In place: `line` is unchecked, so appending to it piece by piece
        // pays no exclusivity check.
        members(&line)
        line.append(UInt8(ascii: "}"))
    }

    /// Leaves `line` holding `{` and the timestamp's members: the last
    /// line's first bytes while `timestamp` returns the same object (as
    /// `mainloop run`'s does for a millisecond), printed anew otherwise.
    private func startLine(_ stamp: JSONObject) {
        if timestampTextCount > 0, stamp.isIdentical(to: printedTimestamp) {
            return line.removeSubrange(timestampTextCount...)
        }
        printedTimestamp = stamp
        timestampGeneration &+= 1
        line.removeAll(keepingCapacity: true)
        line.append(UInt8(ascii: "{"))
        stamp.appendMembersJSON(to: &line)
        timestampTextCount = line.count
    }

    private func callback(_ callback: LifecycleCallback) { record("callback", .string(callback.rawValue)) }

    public func applicationWillFinishLaunching(_ application: Application) { callback(.willFinishLaunching) }
    public func applicationDidFinishLaunching(_ application: Application) { callback(.didFinishLaunching) }
    public func applicationDidBecomeActive(_ application: Application) { callback(.didBecomeActive) }
    public func applicationWillResignActive(_ application: Application) { callback(.willResignActive) }
    public func applicationDidEnterBackground(_ application: Application) {
        callback(.didEnterBackground)
        didEnterBackground?(application)
    }
    public func applicationWillEnterForeground(_ application: Application) { callback(.willEnterForeground) }
    public func applicationWillTerminate(_ application: Application) { callback(.willTerminate) }
    public func application(_ application: Application, didReceiveInput input: String) { record("input", .string(input)) }
    public func application(_ application: Application, didReceiveLocalNotification label: String) {
        record(["localNotification": .string(label), "delivery": "app"])
    }

    /// The engine's side: states, kills, discarded input, presented
    /// notifications, and inputs refused when the loop applied them.
    private func engine(_ event: EngineEvent) {
        switch event {
        case .stateChanged(let state): record("state", .string(state.rawValue))
        case .killed(let reason): record("killed", .string(reason.rawValue))
        case .inputDiscarded(let input): record("discarded", ["input": .string(input)])
        case .localNotificationPresented(let label): record(["localNotification": .string(label), "delivery": "presented"])
        case .commandRejected(let command, _): record("rejected", .string(command.rawValue))
        case .systemEventRefused(let error): record("refused", ["system": .string(error.description)])
        case .memoryWarning(let delivered): record("memoryWarning", ["deliveredToApp": .bool(delivered)])
        case .appSourceFailed(let descriptor, let error):
            record("appSourceFailed", ["fileDescriptor": .number(Double(descriptor)), "error": .string(error.description)])
        }
    }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension ObservationRecorder: Sendable {}
