// SwiftNIO beside the main loop: NIO's channels on NIO's threads, the app's
// work on the main loop (MainLoopNIO).
//
// NIOPosix bootstraps accept only NIO's own loops, so a NIO server stays on
// a MultiThreadedEventLoopGroup. What crosses over:
// - a request read on NIO's thread is answered by app code on the main
//   loop: `application.eventLoop.submit { … }`, whose result hops back to
//   the channel's loop to be written;
// - the main loop's own work reaches NIO by hopping out (a client started
//   from the main loop) and gets its results back with
//   `hop(to: MainRunLoop.main.eventLoop)`.
// Work on `application.eventLoop` is app code: while the app is suspended
// it waits for the resume. The run below shows it: a request sent while the
// app is suspended is answered only after `foreground`.
import Dispatch
import Glibc
import MainLoopKit
import MainLoopNIO
import NIOCore
import NIOPosix

/// Writes one line at once (unbuffered, so the order is the real one).
func emit(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
}

/// The server side, on NIO's thread: each read is one request, answered by
/// `answer` (which runs elsewhere) and written back on the channel's loop.
final class RequestHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let answer: @Sendable (String) -> EventLoopFuture<String>

    init(answer: @escaping @Sendable (String) -> EventLoopFuture<String>) { self.answer = answer }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let request = String(buffer: unwrapInboundIn(data))
        let channel = context.channel
        answer(request).hop(to: context.eventLoop).whenSuccess { reply in
            channel.writeAndFlush(ByteBuffer(string: reply), promise: nil)
        }
    }
}

/// The client side, on NIO's thread: each read is one reply, handed on.
final class ReplyHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let onReply: @Sendable (String) -> Void

    init(onReply: @escaping @Sendable (String) -> Void) { self.onReply = onReply }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        onReply(String(buffer: unwrapInboundIn(data)))
    }
}

/// What the app keeps: requests answered so far. Reached only on the main
/// loop (through `NIOLoopBound`, which checks it).
final class Ledger {
    var answered = 0
}

let loop = MainRunLoop.main
let application = try Application(loop: loop)
try application.perform(.launch)
let appLoop = application.eventLoop
let mainLoop = loop.eventLoop
let ledger = NIOLoopBound(Ledger(), eventLoop: appLoop)
let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

let server = try ServerBootstrap(group: group)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(RequestHandler { request in
                // App code, on the main loop: held while the app is suspended.
                appLoop.submit {
                    ledger.value.answered += 1
                    return "\(ledger.value.answered): \(request) (answered on the main loop: \(loop.inLoop))"
                }
            })
        }
    }
    .bind(host: "127.0.0.1", port: 0)
    .wait()

/// Replies, in arrival order, handed to the main loop.
let replies = NIOLoopBound(Ledger(), eventLoop: mainLoop)
let waiting = NIOLoopBoundBox<[(String) -> Void]>([], eventLoop: mainLoop)
let client = try ClientBootstrap(group: group)
    .channelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(ReplyHandler { reply in
                mainLoop.execute {
                    replies.value.answered += 1
                    if !waiting.value.isEmpty { waiting.value.removeFirst()(reply) }
                }
            })
        }
    }
    .connect(to: server.localAddress!)
    .wait()  // before the loop runs: waiting on the loop's own thread while it runs would block it

/// Sends `request` from the main loop; `then` gets the reply there.
func send(_ request: String, then: @escaping (String) -> Void) {
    waiting.value.append(then)
    client.writeAndFlush(ByteBuffer(string: request), promise: nil)
}

send("hello") { reply in
    emit("reply: \(reply)")
    try! application.perform(.home)
    emit("app state: \(application.state)")
    send("sent while suspended") { reply in
        emit("reply: \(reply)")
        emit("app state when it came: \(application.state)")
        client.close().hop(to: mainLoop).flatMap { server.close() }.hop(to: mainLoop).whenComplete { _ in
            group.shutdownGracefully { error in
                mainLoop.execute {
                    emit("NIO shut down\(error.map { ": \($0)" } ?? ""), \(replies.value.answered) replies")
                    loop.stop()
                }
            }
        }
    }
    // The request waits on the main loop until the app resumes; the loop's
    // own work (this timer) still runs meanwhile.
    loop.scheduleTimer(after: .milliseconds(200)) {
        emit("after 200 ms suspended: \(replies.value.answered) reply so far")
        try! application.perform(.foreground)
    }
}

try loop.run()
emit("stopped cleanly")
