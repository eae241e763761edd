import MainLoop
import MainLoopNIO

/// A deterministic loop owned by the calling thread, as a SwiftNIO
/// `EventLoop`: what SwiftNIO's tests get from `EmbeddedEventLoop()`. Time
/// moves only in `loop.advance(by:)`; posted work runs in `runUntilIdle()`.
public func makeDeterministicEventLoop() -> MainLoopEventLoop {
    do {
        // The view holds the loop, so the loop lives as long as the view.
        return try MainRunLoop(deterministic: true).eventLoop
    } catch {
        fatalError("cannot make a deterministic loop: \(error)")
    }
}
