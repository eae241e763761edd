import Dispatch
import Glibc

/// A thread you start that owns and runs a ``MainRunLoop`` until stopped:
/// for a loop beside the process's main one (``MainRunLoop/main``), e.g. in
/// tests or for a second serial context. Nothing in MainLoop starts one on
/// its own.
///
/// `LoopThread.start()` returns once the loop exists; `stopAndJoin()` stops
/// the loop, waits for the thread, and the loop is shut down on its own
/// thread (after running what was already posted) before the thread exits.
public final class LoopThread: @unchecked Sendable {
    /// The loop this thread runs.
    public let loop: MainRunLoop
    private let thread: pthread_t
    private let box: Box

    private final class Box: @unchecked Sendable {
        let ready = DispatchSemaphore(value: 0)
        var started: Result<MainRunLoop, MainLoopError>?
        /// Set by the thread before it exits; read after `pthread_join`.
        var ended: Result<Void, MainLoopError> = .success(())
    }

    private init(loop: MainRunLoop, thread: pthread_t, box: Box) {
        self.loop = loop
        self.thread = thread
        self.box = box
    }

    /// Starts a thread, creates a real-clock loop on it, and runs it.
    /// - Throws: ``MainLoopError/system(operation:errno:)`` when the thread
    ///   or the loop cannot be created.
    public static func start() throws(MainLoopError) -> LoopThread {
        let box = Box()
        var thread = pthread_t()
        let context = Unmanaged.passRetained(box).toOpaque()
        let status = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            let loop: MainRunLoop
            do throws(MainLoopError) {
                loop = try MainRunLoop()
            } catch {
                box.started = .failure(error)
                box.ready.signal()
                return nil
            }
            box.started = .success(loop)
            box.ready.signal()
            do throws(MainLoopError) {
                try loop.run()
                try loop.runUntilIdle()
                try loop.shutdown()
            } catch {
                box.ended = .failure(error)
            }
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<Box>.fromOpaque(context).release()
            throw .system(operation: "pthread_create", errno: status)
        }
        box.ready.wait()
        switch box.started! {
        case .success(let loop): return LoopThread(loop: loop, thread: thread, box: box)
        case .failure(let error):
            pthread_join(thread, nil)
            throw error
        }
    }

    /// Stops the loop and waits for the thread to finish.
    /// - Throws: what the loop thread's run or shutdown threw (only if the
    ///   loop was misused from its own callbacks, e.g. shut down there).
    public func stopAndJoin() throws(MainLoopError) {
        loop.stop()
        pthread_join(thread, nil)
        try box.ended.get()
    }
}
