/// A value that belongs to one loop's thread, made safe to carry across
/// threads: it is reachable only on its loop's thread, and every access
/// checks that (as SwiftNIO's `NIOLoopBound` does).
///
/// Use it wherever a loop-bound object (an application, a source, a timer)
/// must travel through a `@Sendable` closure to run on its loop:
///
/// ```swift
/// let bound = LoopBound(application, loop: loop)      // on the loop thread
/// DispatchQueue.global().async {
///     try? loop.execute { bound.value.deliverInput("tap") }   // back on the loop thread
/// }
/// ```
///
/// **Why this is safe** (the one audited argument for every loop-bound value
/// that crosses a thread): the wrapper moves only a reference between
/// threads; the value itself is read only on its loop's thread (checked on
/// every access), and the loop runs one callback at a time, so no two
/// threads ever use it at once. The value is released wherever the last
/// wrapper is dropped; loop-bound classes free what the loop holds for them
/// on the loop thread in their deinit (``MainRunLoop/releaseOnLoop(_:_:)``).
public struct LoopBound<Value>: @unchecked Sendable {
    /// The loop whose thread the value belongs to.
    public let loop: MainRunLoop
    private let stored: Value

    /// Binds `value` to `loop`.
    /// - Precondition: called on `loop`'s thread.
    public init(_ value: Value, loop: MainRunLoop) {
        loop.preconditionInLoop()
        self.loop = loop
        stored = value
    }

    /// Hands `value` over to `loop` from any thread, for an owner that gives
    /// up every other reference to it (a deinit handing what it owned to the
    /// loop): after this call only the loop thread may use it, which
    /// ``value`` checks.
    ///
    /// The value is not declared `sending`: a deinit, the use this is for,
    /// cannot send what it reads from `self` (the compiler takes it as
    /// bound to the releasing task), so every deinit would have to opt out
    /// of the check with `nonisolated(unsafe)`. The rule is the caller's,
    /// and ``value`` enforces it at run time.
    public init(handingOver value: Value, to loop: MainRunLoop) {
        self.loop = loop
        stored = value
    }

    /// The value.
    /// - Precondition: called on the loop's thread.
    public var value: Value {
        loop.preconditionInLoop(function: "LoopBound.value")
        return stored
    }

    /// The value, once its loop is shut down: no loop thread runs any more,
    /// so the one thread that holds the wrapper may finish with it (release
    /// what is left, like closing a descriptor).
    /// - Precondition: the loop is shut down.
    public var valueAfterShutdown: Value {
        precondition(loop.isShutDown, "LoopBound.valueAfterShutdown: the loop is still running; use value on its thread")
        return stored
    }
}

/// A mutable ``LoopBound``: a box whose value is read and written only on
/// its loop's thread (checked), shared by reference between threads. An
/// empty box (`nil`) may be made on any thread, since it holds nothing yet.
public final class LoopBoundBox<Value>: @unchecked Sendable {
    /// The loop whose thread the value belongs to.
    public let loop: MainRunLoop
    /// Touched only on the loop thread (checked by ``value``).
    private var stored: Value

    /// A box holding `value`.
    /// - Precondition: called on `loop`'s thread.
    public init(_ value: Value, loop: MainRunLoop) {
        loop.preconditionInLoop()
        self.loop = loop
        stored = value
    }

    /// An empty box, made on any thread; fill it on the loop thread.
    public static func makeEmpty<Wrapped>(loop: MainRunLoop) -> LoopBoundBox<Wrapped?> where Value == Wrapped? {
        LoopBoundBox<Wrapped?>(empty: loop)
    }

    private init(empty loop: MainRunLoop) where Value: ExpressibleByNilLiteral {
        self.loop = loop
        stored = nil
    }

    /// The value.
    /// - Precondition: read and written on the loop's thread.
    public var value: Value {
        get {
            loop.preconditionInLoop(function: "LoopBoundBox.value")
            return stored
        }
        set {
            loop.preconditionInLoop(function: "LoopBoundBox.value")
            stored = newValue
        }
    }
}
