import CRawLibevent
import Foundation
import MainLoopJSON
import MainLoop
import NIOPosix

// `swift run -c release --package-path Benchmarks compare [--json] [--rounds N]`
//
// Measures the same shapes, in one process, for raw C libevent, MainLoop,
// SwiftNIO, Dispatch and Foundation: median nanoseconds per event over
// several rounds, and the ratio to raw libevent with evthread_use_pthreads.
// evthread_use_pthreads is process-wide and irreversible, so every other
// row (MainLoop creates its bases without it) is measured first.

let arguments = CommandLine.arguments
let json = arguments.contains("--json")
let rounds = arguments.firstIndex(of: "--rounds").flatMap { Int(arguments[$0 + 1]) } ?? 7
/// `--only SUBSTRING` measures only the rows whose name contains it (for profiling).
let only = arguments.firstIndex(of: "--only").map { arguments[$0 + 1] }

struct Row {
    let name: String
    let nsPerEvent: Double
}

var rows: [Row] = []
@MainActor
func measure(_ name: String, _ body: () throws -> Double) rethrows {
    if let only, !name.contains(only), !name.contains("pthreads") { return }
    let value = try median(rounds: rounds, body)
    rows.append(Row(name: name, nsPerEvent: value))
    if !json { FileHandle.standardError.write(Data("measured \(name): \(String(format: "%.1f", value)) ns\n".utf8)) }
}

let million = 1 << 20

// `--probe-timer N`: only schedule/cancel a timer N times (for allocation probing).
if let index = arguments.firstIndex(of: "--probe-timer"), let count = Int(arguments[index + 1]) {
    let loop = try MainRunLoop()
    let timer = loop.makeTimer {}
    for _ in 0..<count {
        timer.schedule(after: .seconds(10))
        timer.cancel()
    }
    exit(0)
}
// `--probe-live N` / `--probe-held N`: only the notification path, N events
// (for callgrind and perf, without the other rows).
if let index = arguments.firstIndex(of: "--probe-live"), let count = Int(arguments[index + 1]) {
    _ = try MainLoopContenders.liveNotification(events: count, observers: 1)
    exit(0)
}
if let index = arguments.firstIndex(of: "--probe-held"), let count = Int(arguments[index + 1]) {
    _ = try MainLoopContenders.heldCoalesce(events: count)
    exit(0)
}
let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

measure("raw libevent event_active→callback (no evthread)") { PeerContenders.rawLibevent(events: million) }
try measure("MainLoop in-loop post→run, typed channel") { try MainLoopContenders.inLoopTyped(events: million) }
try measure("MainLoop in-loop post→run, closure per post") { try MainLoopContenders.inLoopClosure(events: million) }
try measure("MainLoop cross-thread post→run, typed, 1 producer") {
    try MainLoopContenders.crossThreadTyped(events: million, producers: 1)
}
try measure("MainLoop cross-thread post→run, typed, 4 producers") {
    try MainLoopContenders.crossThreadTyped(events: million, producers: 4)
}
try measure("MainLoop cross-thread execute, closure, 1 producer") {
    try MainLoopContenders.crossThreadClosure(events: million / 4)
}
try measure("MainLoop live notification, 1 observer") { try MainLoopContenders.liveNotification(events: million, observers: 1) }
try measure("MainLoop live notification, 16 observers") { try MainLoopContenders.liveNotification(events: million, observers: 16) }
try measure("MainLoop held coalesce while suspended") { try MainLoopContenders.heldCoalesce(events: million) }
measure("SwiftNIO EventLoop.execute, in-loop") { PeerContenders.nioInLoop(events: million / 4, group: group) }
measure("SwiftNIO EventLoop.execute, cross-thread") { PeerContenders.nioCrossThread(events: million / 4, group: group) }
measure("Dispatch serial queue async, cross-thread") { PeerContenders.dispatchSerial(events: million / 4) }
measure("Foundation NotificationCenter.post, 1 observer") { PeerContenders.notificationCenterPost(events: million / 4) }
measure("Foundation NotificationQueue.enqueue, coalescing") { PeerContenders.notificationQueueCoalescing(events: million / 16) }
measure("Foundation RunLoop.perform") { PeerContenders.runLoopPerform(events: million / 16) }
raw_libevent_enable_pthreads()
measure("raw libevent event_active→callback (evthread_use_pthreads)") { PeerContenders.rawLibevent(events: million) }
try group.syncShutdownGracefully()

let lateness = try TimerLateness.measure()
let reference = rows.last!.nsPerEvent
if json {
    for row in rows {
        let object: JSONValue = ["name": .string(row.name), "nsPerEvent": .number((row.nsPerEvent * 10).rounded() / 10),
                                 "ratioToLibevent": .number((row.nsPerEvent / reference * 100).rounded() / 100)]
        print(object.jsonText)
    }
    let timers: JSONValue = ["name": "MainLoop timer lateness (µs)", "samples": .number(Double(lateness.samples)),
                             "earliest": .number(lateness.earliest), "p50": .number(lateness.p50),
                             "p99": .number(lateness.p99), "worst": .number(lateness.worst)]
    // Every stdout line is a comparison row; the lateness summary goes to stderr.
    FileHandle.standardError.write(Data((timers.jsonText + "\n").utf8))
} else {
    print("Timer lateness, \(lateness.samples) one-shot timers 1 ms apart on the real clock (µs late; negative = early):")
    print(String(format: "earliest %.1f, p50 %.1f, p99 %.1f, worst %.1f", lateness.earliest, lateness.p50, lateness.p99, lateness.worst))
    print("")
    print("| contender | ns/event (median of \(rounds)) | × raw libevent (pthreads) |")
    print("|---|---:|---:|")
    for row in rows {
        print("| \(row.name) | \(String(format: "%.1f", row.nsPerEvent)) | \(String(format: "%.2f", row.nsPerEvent / reference)) |")
    }
}
