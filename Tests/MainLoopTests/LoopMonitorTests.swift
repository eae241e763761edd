import Foundation
import Glibc
@testable import MainLoop
import Testing
import TestSupport

/// The loop monitor behind the hang detector and the metrics.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct LoopMonitorTests {
    final class Records: @unchecked Sendable {
        private let lock = NSLock()
        private var dispatches: [LoopDispatch] = []
        private var hangs: [LoopHang] = []
        func add(_ dispatch: LoopDispatch) { lock.lock(); dispatches.append(dispatch); lock.unlock() }
        func add(_ hang: LoopHang) { lock.lock(); hangs.append(hang); lock.unlock() }
        var allDispatches: [LoopDispatch] { lock.lock(); defer { lock.unlock() }; return dispatches }
        var allHangs: [LoopHang] { lock.lock(); defer { lock.unlock() }; return hangs }
    }

    /// Every kind of callback is counted at its priority and measured once.
    @Test func countsAndMeasuresEachKindOfCallback() throws {
        let loop = try MainRunLoop()
        defer { try? loop.shutdown() }
        let records = Records()
        let monitor = loop.startMonitoring(hangThreshold: nil, onDispatch: { records.add($0) })
        let channel = try loop.makeChannel(of: Int.self, priority: .input) { _ in }
        try channel.post(1)
        try loop.execute(priority: .app) {}
        var pipeEnds: [Int32] = [0, 0]
        #expect(pipe(&pipeEnds) == 0)
        defer { close(pipeEnds[0]); close(pipeEnds[1]) }
        var readable: FileDescriptorSource?
        readable = try loop.addFileDescriptor(pipeEnds[0], interest: .read, priority: .system) { _ in
            var byte: UInt8 = 0
            _ = read(pipeEnds[0], &byte, 1)
            try? readable?.remove()
        }
        #expect(write(pipeEnds[1], "x", 1) == 1)
        loop.scheduleTimer(after: .milliseconds(5)) { usleep(2_000) }
        let fired = loop.scheduleTimer(after: .milliseconds(30)) { loop.stop() }
        _ = fired
        try loop.run()
        let kinds = Set(records.allDispatches.map(\.kind))
        #expect(kinds.isSuperset(of: [.postedWork, .fileDescriptor, .timer]), "\(kinds)")
        let timer = try #require(records.allDispatches.first { $0.kind == .timer })
        #expect(timer.duration >= .milliseconds(2), "the sleeping timer's duration is measured")
        #expect(timer.lateness >= .zero && timer.lateness < .seconds(1))
        #expect(monitor.dispatched(at: .system) >= 2, "the fd and the timers run at system priority")
        #expect(monitor.dispatched(at: .input) >= 1 && monitor.dispatched(at: .app) >= 1)
        let total = LoopPriority.allCases.reduce(UInt64(0)) { $0 + monitor.dispatched(at: $1) }
        #expect(total == UInt64(records.allDispatches.count), "one record per callback")
        loop.stopMonitoring()
        #expect(loop.monitor == nil)
    }

    /// A callback over the threshold is reported while it runs (from the
    /// detector's thread, once) and when it returns (on the loop thread).
    @Test func reportsAHangWhileItLastsAndWhenItEnds() throws {
        let loop = try MainRunLoop()
        defer { try? loop.shutdown() }
        let records = Records()
        let monitor = loop.startMonitoring(hangThreshold: .milliseconds(100)) { records.add($0) }
        var ongoingSeenInside = false
        try loop.executeInLoop {
            usleep(400_000)
            ongoingSeenInside = records.allHangs.contains { !$0.finished }
        }
        try loop.execute { usleep(10_000) }  // a short one: not a hang
        try loop.runUntilIdle()
        #expect(ongoingSeenInside, "reported while the loop was still blocked")
        let hangs = records.allHangs
        #expect(hangs.filter { !$0.finished }.count == 1, "reported once while it lasted: \(hangs)")
        let finished = hangs.filter(\.finished)
        #expect(finished.count == 1 && finished[0].kind == .postedWork && finished[0].elapsed >= .milliseconds(400))
        #expect(monitor.hangs == 1)
        #expect(finished[0].description.contains("postedWork callback ran for"))
    }

    /// Unmonitored loops keep working, and the signal reservation refuses
    /// a reserved signal with an error naming its owner. SIGWINCH: a signal
    /// no other suite uses (reservations are process-wide, and suites run
    /// in parallel; SignalSourceTests takes SIGUSR1/SIGUSR2).
    @Test func aReservedSignalIsRefused() throws {
        let loop = try MainRunLoop()
        defer { try? loop.shutdown() }
        MainRunLoop.reserveSignals([SIGWINCH], for: "a test")
        defer { MainRunLoop.releaseSignals([SIGWINCH]) }
        #expect(throws: MainLoopError.signalReserved(signal: SIGWINCH, owner: "a test")) {
            try loop.addSignal(SIGWINCH) {}
        }
        MainRunLoop.releaseSignals([SIGWINCH])
        let source = try loop.addSignal(SIGWINCH) {}
        try source.remove()
    }
}
