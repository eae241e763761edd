import Foundation
import Glibc
import MainLoopKit
@testable import ServiceLogging
import Testing
import TestSupport

/// The service's stdout writer: a bounded queue drained by its own thread.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct BoundedOutputPumpTests {
    /// Everything written arrives, whole and in order, when it is read.
    @Test func linesArriveInOrderWhenRead() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let pump = BoundedOutputPump(descriptor: fds[1], limitBytes: 1 << 20)
        final class Received: @unchecked Sendable {
            private let lock = NSLock()
            private var storage: [UInt8] = []
            var bytes: [UInt8] { lock.withLock { storage } }
            func append(_ more: ArraySlice<UInt8>) { lock.withLock { storage += more } }
        }
        let received = Received()
        let readEnd = fds[0]
        // The read end is closed only after the reader has seen EOF and
        // left: the suites run in parallel, and a reader still calling
        // read() on a closed number would read whatever descriptor another
        // test is given that number next (once it drained the pipe of
        // anUnreadDescriptorNeverBlocksTheWriter, which then failed).
        let readerDone = DispatchSemaphore(value: 0)
        let reader = Thread {
            defer { readerDone.signal() }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(readEnd, &buffer, buffer.count)
                guard count > 0 else { break }
                received.append(buffer[0..<count])
            }
        }
        reader.start()
        // A String's bytes (the generic form, contiguous), an array (its own
        // overload) and a collection that is not contiguous (copied first)
        // are queued alike.
        for index in 0..<10_000 {
            switch index % 3 {
            case 0: pump.write(line: "line \(index)")
            case 1: pump.write(lineBytes: Array("line \(index)".utf8))
            default: pump.write(lineBytes: "line \(index)".utf8.lazy.map { $0 })
            }
        }
        #expect(pump.finish(within: .seconds(5)) == 0)
        close(fds[1])
        #expect(eventually { received.bytes.filter { $0 == UInt8(ascii: "\n") }.count == 10_000 })
        let lines = String(decoding: received.bytes, as: UTF8.self).split(separator: "\n")
        #expect(lines == (0..<10_000).map { "line \($0)"[...] })
        #expect(pump.droppedLines == 0)
        #expect(readerDone.wait(timeout: .now() + 10) == .success, "the reader saw EOF")
        close(fds[0])
    }

    /// Nobody reads: writing never blocks, what does not fit is dropped and
    /// counted, and finishing gives up after its limit.
    @Test func anUnreadDescriptorNeverBlocksTheWriter() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        // Both ends far above the numbers in use (but below the 900+ of
        // AppWorkTests): this test needs its pipe unread and open for its
        // whole length, and with every suite running in parallel in this
        // process a stale read or close of a low, reused number elsewhere
        // can reach it (finish then finds nothing left to write).
        for end in 0..<2 {
            let high = fcntl(fds[end], F_DUPFD_CLOEXEC, 800)
            #expect(high >= 800)
            close(fds[end])
            fds[end] = high
        }
        // The pipe starts full. Otherwise, on a loaded machine, the writer
        // thread may get so little time while the lines are written that all
        // it accepted fits in the pipe's 64 KiB, and finishing then rightly
        // finds nothing left (as it does with a busy machine beside it).
        let flags = fcntl(fds[1], F_GETFL)
        #expect(fcntl(fds[1], F_SETFL, flags | O_NONBLOCK) == 0)
        let filler = [UInt8](repeating: 0x2e, count: 4096)
        while write(fds[1], filler, filler.count) > 0 {}
        #expect(errno == EAGAIN)
        #expect(fcntl(fds[1], F_SETFL, flags) == 0)
        let pump = BoundedOutputPump(descriptor: fds[1], limitBytes: 4096)
        let start = Date()
        var accepted = 0
        for index in 0..<100_000 where pump.write(line: "observation \(index)") { accepted += 1 }
        #expect(Date().timeIntervalSince(start) < 5)
        #expect(pump.droppedLines == 100_000 - accepted)
        #expect(pump.droppedLines > 90_000)
        let finishing = Date()
        #expect(pump.finish(within: .milliseconds(200)) > 0, "some bytes could not be written")
        #expect(Date().timeIntervalSince(finishing) < 2)
        close(fds[0])  // the writer thread now fails with EPIPE and ends
        // Only then is the write end closed: a writer still writing could
        // otherwise write to whatever a parallel test opens next with its number.
        #expect(eventually { pump.pendingBytes == 0 }, "the writer gave up on the closed reader")
        close(fds[1])
    }

    /// Lines the loop writes wake the writer once per turn: they all arrive
    /// once the loop has run, and lines written after its shutdown too.
    @Test func linesWrittenOnTheLoopArriveOnceTheLoopRuns() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let loop = try MainRunLoop(deterministic: true)
        let pump = BoundedOutputPump(descriptor: fds[1], limitBytes: 1 << 20, wakingFrom: loop)
        var received: [UInt8] = []
        func readAvailable(until lines: Int) -> Bool {
            eventually {
                self.readAvailable(from: fds[0], into: &received)
                return received.filter { $0 == UInt8(ascii: "\n") }.count == lines
            }
        }
        for index in 0..<100 { pump.write(line: "turn 1 line \(index)") }
        try loop.runUntilIdle()
        #expect(readAvailable(until: 100))
        for index in 0..<100 { pump.write(line: "turn 2 line \(index)") }
        try loop.runUntilIdle()
        #expect(readAvailable(until: 200))
        try loop.shutdown()
        pump.write(line: "after shutdown")
        #expect(readAvailable(until: 201))
        #expect(pump.finish(within: .seconds(5)) == 0)
        close(fds[1])
        #expect(String(decoding: received, as: UTF8.self).hasSuffix("turn 2 line 99\nafter shutdown\n"))
    }

    /// A reader that went away: every line not written is counted as
    /// dropped, whether the writer had taken it or it was still queued.
    @Test func linesLostToAClosedReaderAreCounted() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        close(fds[0])
        let pump = BoundedOutputPump(descriptor: fds[1], limitBytes: 1 << 20)
        for index in 0..<3 { pump.write(line: "line \(index)") }
        #expect(eventually { pump.droppedLines == 3 })
        #expect(!pump.write(line: "after the reader left"))
        #expect(pump.droppedLines == 4)
        close(fds[1])
    }

    /// A pump that is never written to costs no thread: nothing holds it,
    /// so it is freed when released (a writer thread holds its pump until
    /// `finish`).
    @Test func aPumpNeverWrittenToHasNoThreadAndIsFreed() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { for descriptor in fds { close(descriptor) } }
        var pump: BoundedOutputPump? = BoundedOutputPump(descriptor: fds[1], limitBytes: 1 << 20)
        weak let released = pump
        #expect(released != nil)
        pump = nil
        #expect(released == nil, "no writer thread holds it")
    }

    /// The first line starts the writer, named after the descriptor.
    @Test func theWriterThreadStartsWithTheFirstLine() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        // A descriptor number no live writer thread is named after: a pump
        // another suite wrote to on a number since closed may still run.
        var writeEnd = fds[1]
        var held: [Int32] = []
        while threadNames().contains("ml-out-fd\(writeEnd)") {
            held.append(writeEnd)
            writeEnd = dup(fds[1])
            #expect(writeEnd >= 0)
        }
        let name = "ml-out-fd\(writeEnd)"
        let pump = BoundedOutputPump(descriptor: writeEnd, limitBytes: 1 << 20)
        #expect(!threadNames().contains(name), "no line yet, no writer")
        #expect(pump.write(line: "first"))
        #expect(eventually { threadNames().contains(name) }, "the first line started the writer")
        #expect(pump.finish(within: .seconds(5)) == 0)
        var buffer = [UInt8](repeating: 0, count: 64)
        #expect(read(fds[0], &buffer, buffer.count) == 6)
        for descriptor in Set(held + [fds[1], writeEnd]) { close(descriptor) }
    }

    /// A first line written on the loop's thread does not start the writer
    /// at once: the loop starts it in its turn (for `mainloop run`, the
    /// first turn, after `READY=1`). The line waits queued until then, and
    /// arrives once the loop has run.
    @Test func aLineWrittenOnTheLoopStartsTheWriterInTheLoopsTurn() throws {
        try withPumpAwaitingItsLoop(firstLine: "first") { pump, loop, readEnd in
            #expect(pump.pendingBytes == 6, "queued meanwhile")
            try loop.runUntilIdle()
            #expect(pump.writerThreadStarted)
            #expect(pump.finish(within: .seconds(5)) == 0)
            var buffer = [UInt8](repeating: 0, count: 64)
            #expect(read(readEnd, &buffer, buffer.count) == 6)
        }
    }

    /// A pump made before its loop (the shared stderr pump) is given one
    /// later, with the same effect; a line from another thread still starts
    /// the writer at once.
    @Test func aLoopGivenLaterDefersTheStartAndOtherThreadsDoNot() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { for descriptor in fds { close(descriptor) } }
        let loop = try MainRunLoop(deterministic: true)
        let pump = BoundedOutputPump(descriptor: fds[1], limitBytes: 1 << 20)
        #expect(pump.wakingLoop == nil)
        pump.wakingLoop = loop
        #expect(pump.wakingLoop === loop)
        #expect(pump.write(line: "on the loop"))
        #expect(!pump.writerThreadStarted)
        try loop.runUntilIdle()
        #expect(pump.writerThreadStarted)
        #expect(pump.finish(within: .seconds(5)) == 0)

        let other = BoundedOutputPump(descriptor: fds[1], limitBytes: 1 << 20, wakingFrom: loop)
        #expect(writeFromAnotherThread("off the loop", to: other))
        #expect(other.writerThreadStarted, "not the loop's thread: started at once")
        #expect(other.finish(within: .seconds(5)) == 0)
    }

    /// A line from another thread, while the loop's turn is awaited, starts
    /// the writer at once: lines never wait for a loop that does not turn.
    @Test func aLineFromAnotherThreadDoesNotWaitForTheLoopsTurn() throws {
        try withPumpAwaitingItsLoop(firstLine: "on the loop") { pump, loop, readEnd in
            #expect(writeFromAnotherThread("off the loop", to: pump))
            #expect(pump.writerThreadStarted, "the loop has not turned: the other thread's line started it")
            var received: [UInt8] = []
            #expect(eventually {
                readAvailable(from: readEnd, into: &received)
                return received.count == 25
            })
            #expect(String(decoding: received, as: UTF8.self) == "on the loop\noff the loop\n")
            try loop.runUntilIdle()  // the posted start finds the writer started
            #expect(pump.finish(within: .seconds(5)) == 0)
        }
    }

    /// Lines queued for a writer the loop has not started yet are written
    /// by `finish`, which starts it: a loop that never turns again loses
    /// nothing.
    @Test func finishStartsAWriterTheLoopHasNotStarted() throws {
        try withPumpAwaitingItsLoop(firstLine: "before the loop ran") { pump, loop, readEnd in
            #expect(pump.finish(within: .seconds(5)) == 0)
            var buffer = [UInt8](repeating: 0, count: 64)
            #expect(read(readEnd, &buffer, buffer.count) == 20)
            try loop.runUntilIdle()  // the posted start finds the writer started
            #expect(pump.droppedLines == 0)
        }
    }

    /// A pipe, a deterministic loop and a pump waking from it, with
    /// `firstLine` written on the loop's thread, so the writer's start waits
    /// for the loop's turn; `body` gets the pump, the loop and the pipe's
    /// read end. The pipe is closed after.
    private func withPumpAwaitingItsLoop(firstLine: String,
                                         _ body: (BoundedOutputPump, MainRunLoop, Int32) throws -> Void) throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { for descriptor in fds { close(descriptor) } }
        let loop = try MainRunLoop(deterministic: true)
        let pump = BoundedOutputPump(descriptor: fds[1], limitBytes: 1 << 20, wakingFrom: loop)
        #expect(pump.write(line: firstLine))
        #expect(!pump.writerThreadStarted, "written on the loop's thread: started in its turn")
        try body(pump, loop, fds[0])
    }

    /// Appends what `descriptor` has to read now, without waiting.
    private func readAvailable(from descriptor: Int32, into received: inout [UInt8]) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while poll(&poller, 1, 0) > 0 {
            let count = read(descriptor, &buffer, buffer.count)
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
    }

    /// Writes `line` to `pump` from a new thread (not any loop's) and
    /// waits for the write to return; false if it did not within 10 s.
    private func writeFromAnotherThread(_ line: String, to pump: BoundedOutputPump) -> Bool {
        let written = DispatchSemaphore(value: 0)
        Thread {
            pump.write(line: line)
            written.signal()
        }.start()
        return written.wait(timeout: .now() + 10) == .success
    }

    /// The names of this process's threads (`/proc/self/task/*/comm`).
    private func threadNames() -> Set<String> {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return Set(tasks.compactMap { task in
            // A thread that ended between the listing and the read has no name to give.
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .newlines)
        })
    }
}
