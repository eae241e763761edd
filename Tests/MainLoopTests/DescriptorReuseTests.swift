import Glibc
import MainLoop
import Testing
import TestSupport

/// The kernel drops an epoll registration with the file it was made for:
/// a source whose number names another file now hears nothing of that file
/// until ``FileDescriptorSource/reregister()``.
@Suite(.ownThread, .timeLimit(.minutes(1))) struct DescriptorReuseTests {
    @Test func aNumberThatNamesAnotherFileIsWatchedOnceRegisteredAgain() throws {
        let loop = try MainRunLoop()
        let first = TestPipe(), second = TestPipe()
        let number = first.readEnd
        var reads = 0
        let source = try loop.addFileDescriptor(number, interest: .read) { _ in
            reads += 1
            var byte: UInt8 = 0
            _ = read(number, &byte, 1)
        }
        // The number now names the second pipe's read end; the first
        // pipe's read end is closed (dup2 swaps the two at once).
        #expect(dup2(second.readEnd, number) == number)
        second.writeByte()
        try loop.runUntilIdle()
        #expect(reads == 0, "the kernel still had a registration for the new file")
        try source.reregister()
        try loop.runUntilIdle()
        #expect(reads == 1)
        try source.remove()
        try loop.shutdown()
    }

    @Test func registeringTheSameFileAgainLosesNoReadiness() throws {
        let loop = try MainRunLoop()
        let pipe = TestPipe()
        var reads = 0
        let source = try loop.addFileDescriptor(pipe.readEnd, interest: .read) { _ in
            reads += 1
            pipe.drain()
        }
        pipe.writeByte()
        try source.reregister()
        try loop.runUntilIdle()
        #expect(reads == 1)
        try source.remove()
        #expect(throws: MainLoopError.sourceRemoved) { try source.reregister() }
        try loop.shutdown()
    }
}
