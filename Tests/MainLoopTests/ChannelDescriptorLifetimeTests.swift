@testable import MainLoop
import Glibc
import Testing

/// A post from another thread writes the channel's eventfd after it
/// releases the inbox lock (issue 21: the woken loop thread no longer finds
/// the lock held). That write is safe only while the eventfd cannot be
/// closed under the poster: it stays open until the channel is freed,
/// which a poster, holding the channel, prevents.
@Suite(.timeLimit(.minutes(2))) struct ChannelDescriptorLifetimeTests {
    /// Whether `fd` is open in this process.
    static func isOpen(_ fd: Int32) -> Bool { fcntl(fd, F_GETFD) >= 0 }

    @Test func aClosedChannelKeepsItsEventfdUntilItIsFreed() throws {
        let loop = try MainRunLoop()
        var channel: EventChannel<Int>? = try loop.makeChannel(of: Int.self) { _ in }
        let eventfd = try #require(channel?.wakeFD)
        try channel?.close()
        #expect(Self.isOpen(eventfd), "a poster that still holds the channel may write it")
        #expect(throws: MainLoopError.sourceRemoved) { try channel?.post(1) }
        channel = nil
        try loop.runUntilIdle()  // the janitor drops the loop's own hold on a closed source
        #expect(!Self.isOpen(eventfd), "freed with the channel")
        try loop.shutdown()
    }

    @Test func atShutdownTheEventfdStaysOpenWhileSomeoneHoldsTheChannel() throws {
        let loop = try MainRunLoop()
        var channel: EventChannel<Int>? = try loop.makeChannel(of: Int.self) { _ in }
        let eventfd = try #require(channel?.wakeFD)
        try loop.shutdown()
        #expect(Self.isOpen(eventfd))
        channel = nil
        #expect(!Self.isOpen(eventfd))
    }
}
