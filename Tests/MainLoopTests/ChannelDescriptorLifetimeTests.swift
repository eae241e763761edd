@testable import MainLoop
import Foundation
import Glibc
import Testing
import TestSupport

/// A post from another thread writes the channel's eventfd after it
/// releases the inbox lock (the woken loop thread no longer finds
/// the lock held). That write is safe only while the eventfd cannot be
/// closed under the poster: it stays open until the channel is freed,
/// which a poster, holding the channel, prevents.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct ChannelDescriptorLifetimeTests {
    /// The kernel's id of the eventfd open at `fd` (`eventfd-id` in
    /// /proc/self/fdinfo), or nil when `fd` is closed or is not an eventfd.
    /// Tests run in parallel and a closed descriptor's number is soon reused,
    /// so "still open" means "still this eventfd", not "some file at `fd`".
    static func eventfdID(_ fd: Int32) -> String? {
        guard let info = FileManager.default.contents(atPath: "/proc/self/fdinfo/\(fd)") else { return nil }
        let field = String(decoding: info, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("eventfd-id:") }
        return field?.dropFirst("eventfd-id:".count).trimmingCharacters(in: .whitespaces)
    }

    @Test func aClosedChannelKeepsItsEventfdUntilItIsFreed() throws {
        let loop = try MainRunLoop()
        var channel: EventChannel<Int>? = try loop.makeChannel(of: Int.self) { _ in }
        let eventfd = try #require(channel?.wakeFD)
        let id = try #require(Self.eventfdID(eventfd))
        try channel?.close()
        #expect(Self.eventfdID(eventfd) == id, "a poster that still holds the channel may write it")
        #expect(throws: MainLoopError.sourceRemoved) { try channel?.post(1) }
        channel = nil
        try loop.runUntilIdle()  // the janitor drops the loop's own hold on a closed source
        #expect(Self.eventfdID(eventfd) != id, "freed with the channel")
        try loop.shutdown()
    }

    @Test func atShutdownTheEventfdStaysOpenWhileSomeoneHoldsTheChannel() throws {
        let loop = try MainRunLoop()
        var channel: EventChannel<Int>? = try loop.makeChannel(of: Int.self) { _ in }
        let eventfd = try #require(channel?.wakeFD)
        let id = try #require(Self.eventfdID(eventfd))
        try loop.shutdown()
        #expect(Self.eventfdID(eventfd) == id)
        channel = nil
        #expect(Self.eventfdID(eventfd) != id)
    }
}
