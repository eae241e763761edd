import CRawLibevent
import EngineWire
import Foundation
import MainLoop
import MainLoopJSON
import NIOPosix

// `swift run -c release --package-path Benchmarks compare [--json] [--rounds N] [--only SUBSTRING] [--check-targets]`
// `... compare --curves [--rounds N]`: the scaling curves instead (Curves.swift).
// `... compare --allocations`: heap allocations per operation of each loop's rows (Allocations.swift).
//
// Measures the same shapes, in one process, for raw C libevent, MainLoop,
// SwiftNIO, Dispatch and Foundation. The contenders run interleaved, one
// measurement of each per round, so a slow phase of this shared VM lands on
// all of them alike; each row reports the median of the rounds and their
// spread (min–max). evthread_use_pthreads is process-wide and irreversible,
// so its reference row is measured after all the others. The targets
// follow the table, as paired per-round ratios (see Target);
// `--check-targets` makes the exit status 1 when one is missed.

let arguments = CommandLine.arguments
let json = arguments.contains("--json")
let rounds = arguments.firstIndex(of: "--rounds").flatMap { Int(arguments[$0 + 1]) } ?? 7
/// `--only SUBSTRING` measures only the rows whose name contains it (for
/// profiling); `--only "A|B"` those whose name contains A or B.
let only = arguments.firstIndex(of: "--only").map { arguments[$0 + 1].split(separator: "|").map(String.init) }
let checkTargets = arguments.contains("--check-targets")

struct Contender {
    let name: String
    let run: () throws -> Double
}

struct Row {
    let name: String
    let samples: [Double]
    var median: Double { samples.sorted()[samples.count / 2] }
    var low: Double { samples.min()! }
    var high: Double { samples.max()! }
}

let million = 1 << 20

// Probes for callgrind and perf: `--probe-NAME N` runs only one path, N events.
let probes: [String: (Int) throws -> Void] = [
    "timer": { _ = try MainLoopContenders.timerScheduleCancel(pending: 10_000, operations: $0) },
    "raw-timer": { _ = raw_libevent_timer_add_del_ns(10_000, $0) },
    "raw-fd": { _ = raw_libevent_fd_dispatch_ns(1000, $0) },
    "typed": { _ = try MainLoopContenders.inLoopTyped(events: $0) },
    "live": { _ = try MainLoopContenders.liveNotification(events: $0, observers: 1) },
    "held": { _ = try MainLoopContenders.heldCoalesce(events: $0) },
    "keyed": { _ = try MainLoopContenders.heldKeyed(events: $0, subjects: 1000) },
    // Every event a subject's first hold (as in the 10^6 row): N ≤ 100,000.
    "keyed-first": { _ = try MainLoopContenders.heldKeyed(events: $0, subjects: 100_000) },
    "flush": { _ = try MainLoopContenders.resumeFlush(subjects: 100_000, resumes: $0) },
    "cycle": { _ = try MainLoopContenders.lifecycleCycles($0) },
    "fd": { _ = try MainLoopContenders.fdDispatch(fds: 1000, rounds: $0) },
    "fd-observed": { _ = try MainLoopContenders.fdDispatch(fds: 1000, rounds: $0, observed: true) },
    "idle": { _ = try LoopSourceContenders.mainLoopIdlePass($0) },
    // Calls to an actor on `loop.executor`, or on a SwiftNIO loop's executor.
    "actor-mainloop": { try ActorContenders.oneSide(.mainLoop, calls: $0) },
    "actor-nio": { try ActorContenders.oneSide(.nio, calls: $0) },
    "flush-memory": { try MainLoopContenders.flushMemory(subjects: $0) },
    // A live notification to `mainloop run`'s recorder, printed as a text line.
    "observation-line": { _ = try MainLoopContenders.observationLines(events: $0) },
    // One event line of the control socket read from its bytes, N times.
    "event-line": { count in
        let line = Array(#"{"system":{"orientation":"faceUp"}}"#.utf8)
        var total = 0
        line.withUnsafeBufferPointer { bytes in
            for _ in 0..<count {
                guard let event = SystemEventLine(bytes) else { preconditionFailure("the line did not read") }
                total &+= event.kindName.count &+ event.valueText.count
            }
        }
        precondition(total > 0)
    },
    // One observation line of `mainloop run` serialized to bytes, N times.
    "json-line": { count in
        let line: JSONObject = ["at": .number(1_795_546_609.301), "time": .string("2026-11-24T18:56:49.301Z"),
                                "notification": .string("orientationDidChange"), "orientation": .string("faceUp"),
                                "merged": .number(1)]
        var bytes: [UInt8] = []
        var total = 0
        for _ in 0..<count {
            bytes.removeAll(keepingCapacity: true)
            JSONValue.object(line).appendJSON(to: &bytes)
            total &+= bytes.count
        }
        precondition(total > 0)
    },
]
for (name, probe) in probes {
    if let index = arguments.firstIndex(of: "--probe-\(name)"), let count = Int(arguments[index + 1]) {
        try probe(count)
        exit(0)
    }
}

if let index = arguments.firstIndex(of: "--million-timers"), index + 1 < arguments.count {
    try MillionTimers.runAsChild(arguments[index + 1])
}
if arguments.contains("--allocations") {
    try Allocations.run()
}
if let index = arguments.firstIndex(of: "--child-cycle"), index + 2 < arguments.count {
    try LoopSourceContenders.runChildCycleAsChild(arguments[index + 1], children: arguments[index + 2])
}

if arguments.contains("--curves") {
    try Curves.run(rounds: rounds)
    exit(0)
}

let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
// MainLoopNIO's rows: a MainRunLoop run by its own thread, seen as an EventLoop,
// beside a second NIO loop, so that a hop has a NIO source and a target
// of each kind.
let nioGroup = MultiThreadedEventLoopGroup(numberOfThreads: 2)
let nioSource = nioGroup.next(), nioTarget = nioGroup.next()
let loopThread = try LoopThread.start()
let mainLoopEventLoop = loopThread.loop.eventLoop
let typedName = "MainLoop in-loop post→run, typed channel"
let referenceName = "raw libevent event_active→callback (evthread_use_pthreads)"
let contenders: [Contender] = ([
    Contender(name: "raw libevent event_active→callback (no evthread)") { PeerContenders.rawLibevent(events: million) },
    Contender(name: "GLib in-loop post→run") { try PeerContenders.glibInLoopPost(posts: million / 4) },
    Contender(name: "sd-event in-loop post→run") { try PeerContenders.sdEventInLoopPost(posts: million) },
    // The rows whose targets are ratios to the typed post run right after
    // it, so that a round's pair is measured side by side (with the
    // cross-thread rows in between, seconds of other threads' work
    // separated them).
    Contender(name: typedName) { try MainLoopContenders.inLoopTyped(events: million) },
    Contender(name: "MainLoop live notification, 1 observer") { try MainLoopContenders.liveNotification(events: million, observers: 1) },
    Contender(name: "MainLoop live notification, 16 observers") { try MainLoopContenders.liveNotification(events: million, observers: 16) },
    Contender(name: "MainLoop held coalesce while suspended") { try MainLoopContenders.heldCoalesce(events: million) },
    Contender(name: "MainLoop held coalesce, keyed, 10 subjects") { try MainLoopContenders.heldKeyed(events: million, subjects: 10) },
    Contender(name: "MainLoop held coalesce, keyed, 1000 subjects") { try MainLoopContenders.heldKeyed(events: million, subjects: 1000) },
    Contender(name: "MainLoop held coalesce, keyed, 100000 subjects") {
        try MainLoopContenders.heldKeyed(events: million, subjects: 100_000)
    },
    Contender(name: "MainLoop held coalesce, keyed, 1000000 subjects") {
        try MainLoopContenders.heldKeyed(events: million, subjects: 1_000_000)
    },
    Contender(name: "MainLoop in-loop post→run, closure per post") { try MainLoopContenders.inLoopClosure(events: million) },
    Contender(name: "MainLoop cross-thread post→run, typed, 1 producer") {
        try MainLoopContenders.crossThreadTyped(events: million, producers: 1)
    },
    Contender(name: "MainLoop cross-thread post→run, typed, 4 producers") {
        try MainLoopContenders.crossThreadTyped(events: million, producers: 4)
    },
    Contender(name: "MainLoop cross-thread execute, closure, 1 producer") {
        try MainLoopContenders.crossThreadClosure(events: million / 4)
    },
    Contender(name: "MainLoop resume flush, 1000 held subjects (per notification)") {
        try MainLoopContenders.resumeFlush(subjects: 1000, resumes: 64)
    },
    Contender(name: "MainLoop resume flush, 100000 held subjects (per notification)") {
        try MainLoopContenders.resumeFlush(subjects: 100_000)
    },
    Contender(name: "MainLoop resume flush, 1000000 held subjects (per notification)") {
        try MainLoopContenders.resumeFlush(subjects: 1_000_000, resumes: 2)
    },
    Contender(name: "MainLoop timer schedule+cancel, 10000 pending") {
        try MainLoopContenders.timerScheduleCancel(pending: 10_000, operations: million / 4)
    },
    // A per-callback clock counts from the instant the callback began, as
    // libuv, GLib and sd-event count from their iteration's cached time.
    Contender(name: "MainLoop timer schedule+cancel, 10000 pending, per-callback clock") {
        try MainLoopContenders.timerScheduleCancel(pending: 10_000, operations: million / 4, clockReading: .perCallback)
    },
    Contender(name: "raw libevent timer schedule+cancel, 10000 pending") { raw_libevent_timer_add_del_ns(10_000, million / 4) },
    Contender(name: "raw libevent timer schedule+cancel, 10000 pending, precise clock") {
        raw_libevent_precise_timer_add_del_ns(10_000, million / 4)
    },
    Contender(name: "MainLoopNIO loop.eventLoop.execute, in-loop") {
        NIOContenders.executeInLoop(events: million / 4, on: mainLoopEventLoop)
    },
    Contender(name: "SwiftNIO EventLoop.execute, in-loop") {
        NIOContenders.executeInLoop(events: million / 4, on: nioTarget)
    },
    Contender(name: "MainLoopNIO loop.eventLoop.execute, cross-thread") {
        NIOContenders.executeCrossThread(events: million / 4, on: mainLoopEventLoop)
    },
    Contender(name: "SwiftNIO EventLoop.execute, cross-thread") {
        NIOContenders.executeCrossThread(events: million / 4, on: nioTarget)
    },
    Contender(name: "MainLoopNIO future hop, NIO loop → loop.eventLoop") {
        NIOContenders.hop(events: million / 8, from: nioSource, to: mainLoopEventLoop)
    },
    Contender(name: "SwiftNIO future hop, NIO loop → other NIO loop") {
        NIOContenders.hop(events: million / 8, from: nioSource, to: nioTarget)
    },
    Contender(name: "MainLoopNIO scheduleTask+cancel, 1000 pending") {
        try NIOContenders.scheduleCancel(operations: million / 8, pending: 1000, on: mainLoopEventLoop)
    },
    Contender(name: "SwiftNIO scheduleTask+cancel, 1000 pending") {
        try NIOContenders.scheduleCancel(operations: million / 8, pending: 1000, on: nioTarget)
    },
    // These two are measured together, calls alternating (ActorContenders).
    Contender(name: "MainLoop actor on loop.executor, call from a global task") {
        try ActorContenders.result(.mainLoop, calls: million / 16, group: group)
    },
    Contender(name: "SwiftNIO actor on EventLoop.executor, call from a global task") {
        try ActorContenders.result(.nio, calls: million / 16, group: group)
    },
    Contender(name: "Swift default actor, call from a global task") { ActorContenders.defaultActor(calls: million / 16) },
] + WakeLatency.Placement.allCases.flatMap { placement in
    WakeLatency.Poster.allCases.map { poster in
        Contender(name: WakeLatency.name(poster, placement)) { try WakeLatency.result(poster, placement) }
    } + WakeLatency.Poster.allCases.map { poster in
        // The p99 of the samples the p50 row just took (no run of its own).
        Contender(name: WakeLatency.name(poster, placement, "p99")) { WakeLatency.p99(of: WakeLatency.name(poster, placement)) }
    }
} + [
    Contender(name: "Dispatch serial queue async, cross-thread") { PeerContenders.dispatchSerial(events: million / 4) },
    Contender(name: "Foundation NotificationCenter.post, 1 observer") { PeerContenders.notificationCenterPost(events: million / 4) },
    Contender(name: "Foundation NotificationQueue.enqueue, coalescing") {
        PeerContenders.notificationQueueCoalescing(events: million / 16)
    },
    Contender(name: "Foundation RunLoop.perform") { PeerContenders.runLoopPerform(events: million / 16) },
    Contender(name: "MainLoop fd readiness dispatch, 1 ready of 1000, an observer of every activity") {
        try MainLoopContenders.fdDispatch(fds: 1000, rounds: million / 16, observed: true)
    },
] + LoopSourceContenders.fdPairRows(dispatches: million / 16)
  + LoopSourceContenders.timerAndFdRows(operations: million / 4, rounds: million / 16) + MillionTimers.rows()
  + LoopSourceContenders.idleRows(passes: million / 4) + LoopSourceContenders.childRows(children: 160)
  + GLibContenders.rows(timeouts: million / 16, roundTrips: million / 64)).filter { contender in
    contender.name == typedName || (only.map { $0.contains { contender.name.contains($0) } } ?? true)
}

var samples: [String: [Double]] = [:]
for round in 1...rounds {
    for contender in contenders {
        let value = try contender.run()
        samples[contender.name, default: []].append(value)
        if !json {
            writeToStandardError("round \(round)/\(rounds) \(contender.name): \(String(format: "%.1f", value)) ns\n")
        }
    }
}
try group.syncShutdownGracefully()
try nioGroup.syncShutdownGracefully()
try loopThread.stopAndJoin()
raw_libevent_enable_pthreads()
samples[referenceName] = (0..<rounds).map { _ in PeerContenders.rawLibevent(events: million) }

let rows = (contenders.map(\.name) + [referenceName]).map { Row(name: $0, samples: samples[$0]!) }
let reference = rows.last!.median
let typed = rows.first { $0.name == typedName }!.median
let lateness = try TimerLateness.measure()
func rounded(_ value: Double, _ places: Double = 10) -> Double { (value * places).rounded() / places }
if json {
    for row in rows {
        let object: JSONValue = ["name": .string(row.name), "nsPerEvent": .number(rounded(row.median)),
                                 "min": .number(rounded(row.low)), "max": .number(rounded(row.high)),
                                 "ratioToLibevent": .number(rounded(row.median / reference, 100)),
                                 "ratioToTypedPost": .number(rounded(row.median / typed, 100))]
        print(object.jsonText)
    }
    let timers: JSONValue = ["name": "MainLoop timer lateness (µs)", "samples": .number(Double(lateness.samples)),
                             "earliest": .number(lateness.earliest), "p50": .number(lateness.p50),
                             "p99": .number(lateness.p99), "worst": .number(lateness.worst)]
    // Every stdout line is a comparison row; the lateness summary goes to stderr.
    writeToStandardError(timers.jsonText + "\n")
} else {
    print("Timer lateness, \(lateness.samples) one-shot timers 1 ms apart on the real clock (µs late; negative = early):")
    print(String(format: "earliest %.1f, p50 %.1f, p99 %.1f, worst %.1f", lateness.earliest, lateness.p50, lateness.p99, lateness.worst))
    print("")
    print("| contender | ns/event (median of \(rounds), interleaved) | min–max | × raw libevent (pthreads) | × typed post→run |")
    print("|---|---:|---:|---:|---:|")
    for row in rows {
        print(String(format: "| %@ | %.1f | %.1f–%.1f | %.2f | %.2f |", row.name, row.median, row.low, row.high,
                     row.median / reference, row.median / typed))
    }
}

// The targets, as paired per-round ratios (a table, or JSON lines on stderr).
var missed: [String] = []
if !json {
    print("")
    print("| target | measured (median of \(rounds) paired rounds) | min–max | met |")
    print("|---|---:|---:|---|")
}
for target in Target.all(typed: typedName) {
    guard let ratios = target.ratios(samples) else { continue }
    let row = Row(name: target.title, samples: ratios)
    let met = target.isMet(by: row.median)
    if !met { missed.append(target.title) }
    let unit = target.baseline == nil ? " ns" : "×"
    if json {
        let object: JSONValue = ["target": .string(target.title), "median": .number(rounded(row.median, 100)),
                                 "min": .number(rounded(row.low, 100)), "max": .number(rounded(row.high, 100)),
                                 "met": .bool(met)]
        writeToStandardError(object.jsonText + "\n")
    } else {
        print(String(format: "| %@ | %.2f%@ | %.2f–%.2f | %@ |", target.title, row.median, unit, row.low, row.high,
                     met ? "yes" : "**no**"))
    }
}
if checkTargets && !missed.isEmpty {
    writeToStandardError("missed targets: \(missed.joined(separator: "; "))\n")
    exit(1)
}
