import CGLib
import Glibc
import MainLoop

/// A ``/MainLoop/MainRunLoop`` driven by a GLib main loop it does not own: a
/// `GSource` on the loop's backend descriptor
/// (``/MainLoop/MainRunLoop/backendFileDescriptor()``) whose timeout is the
/// loop's ``/MainLoop/MainRunLoop/nextDeadline`` and whose dispatch is
/// ``/MainLoop/MainRunLoop/dispatchReady()``. The loop's timers, channels,
/// descriptors and an `Application` on it then run whenever GLib's
/// `GMainLoop` (or `g_main_context_iteration`) runs the context.
///
/// The context must be run by the loop's thread: make the loop on the
/// thread that runs the `GMainLoop`.
public final class GLibDrivenLoop {
    /// The loop driven.
    public let loop: MainRunLoop
    /// The context the source is attached to (`GMainContext *`).
    public let context: OpaquePointer
    /// Whether ``detach()`` has run, or the source ended on an error.
    public private(set) var isDetached = false

    private let source: UnsafeMutablePointer<GSource>
    private let descriptorTag: gpointer
    private let onError: (MainLoopError) -> Void

    /// Attaches a source that drives `loop` to `context`.
    /// - Parameters:
    ///   - loop: a real-clock loop made on this thread.
    ///   - context: a `GMainContext *`; nil for GLib's default context.
    ///   - priority: the source's GLib priority (`G_PRIORITY_DEFAULT`:
    ///     beside GLib's timeouts and I/O).
    ///   - onError: called once if a dispatch fails (the loop was shut
    ///     down, or is run by `run()` meanwhile); the source is then
    ///     detached.
    /// - Throws: ``/MainLoop/MainLoopError/notDeterministic`` for a
    ///   manual-clock loop (step it with `advance`), and what
    ///   ``/MainLoop/MainRunLoop/backendFileDescriptor()`` throws.
    public init(loop: MainRunLoop, context: OpaquePointer? = nil, priority: Int32 = G_PRIORITY_DEFAULT,
                onError: @escaping (MainLoopError) -> Void) throws(MainLoopError) {
        loop.preconditionInLoop()
        if loop.isDeterministic { throw .notDeterministic }
        let descriptor = try loop.backendFileDescriptor()
        self.loop = loop
        self.onError = onError
        self.context = context ?? g_main_context_default()
        let size = MemoryLayout<GSource>.stride + MemoryLayout<UnsafeRawPointer>.stride
        source = g_source_new(sourceFunctions, guint(size))
        descriptorTag = g_source_add_unix_fd(source, descriptor, G_IO_IN)
        g_source_set_priority(source, priority)
        g_source_set_name(source, "MainLoop")
        Self.ownerSlot(of: source).pointee = Unmanaged.passUnretained(self).toOpaque()
        g_source_attach(source, self.context)
    }

    deinit {
        if !isDetached { destroySource() }
        g_source_unref(source)
    }

    /// Detaches the source: GLib stops driving the loop.
    public func detach() {
        loop.preconditionInLoop()
        guard !isDetached else { return }
        destroySource()
    }

    private func destroySource() {
        isDetached = true
        Self.ownerSlot(of: source).pointee = nil
        g_source_destroy(source)
    }

    /// Milliseconds until the loop's next deadline, rounded up (GLib's
    /// timeout never ends before it), 0 if work is ready, -1 for none.
    fileprivate func timeoutMilliseconds() -> Int32 {
        // A shut-down loop's descriptor is closed (its number may be
        // another file's by now): dispatch at once, which reports it.
        if loop.isShutDown { return 0 }
        guard let deadline = loop.nextDeadline else { return -1 }
        let remaining = deadline - loop.now
        guard remaining > .zero else { return 0 }
        let (seconds, attoseconds) = remaining.components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }

    fileprivate func descriptorReadable() -> Bool {
        g_source_query_unix_fd(source, descriptorTag).rawValue & G_IO_IN.rawValue != 0
    }

    /// Runs the loop's ready work; false (remove the source) after an error.
    fileprivate func dispatch() -> Bool {
        do {
            try loop.dispatchReady()
            return true
        } catch {
            isDetached = true
            Self.ownerSlot(of: source).pointee = nil
            onError(error)
            return false
        }
    }

    /// Where the source's owner is kept, after the `GSource` itself.
    fileprivate static func ownerSlot(of source: UnsafeMutablePointer<GSource>?) -> UnsafeMutablePointer<UnsafeMutableRawPointer?> {
        UnsafeMutableRawPointer(source!).advanced(by: MemoryLayout<GSource>.stride)
            .assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
    }

    fileprivate static func owner(of source: UnsafeMutablePointer<GSource>?) -> GLibDrivenLoop? {
        ownerSlot(of: source).pointee.map { Unmanaged<GLibDrivenLoop>.fromOpaque($0).takeUnretainedValue() }
    }
}

/// The source's functions: GLib keeps a pointer to them for the source's
/// life, so they are allocated once and never freed.
nonisolated(unsafe) private let sourceFunctions: UnsafeMutablePointer<GSourceFuncs> = {
    let functions = UnsafeMutablePointer<GSourceFuncs>.allocate(capacity: 1)
    functions.initialize(to: drivingFunctions)
    return functions
}()

private let drivingFunctions = GSourceFuncs(
    prepare: { source, timeout in
        guard let driven = GLibDrivenLoop.owner(of: source) else {
            timeout?.pointee = -1
            return 0
        }
        let milliseconds = driven.timeoutMilliseconds()
        timeout?.pointee = milliseconds
        return milliseconds == 0 ? 1 : 0
    },
    check: { source in
        guard let driven = GLibDrivenLoop.owner(of: source) else { return 0 }
        return driven.descriptorReadable() || driven.timeoutMilliseconds() == 0 ? 1 : 0
    },
    dispatch: { source, _, _ in
        guard let driven = GLibDrivenLoop.owner(of: source) else { return 0 }
        return driven.dispatch() ? 1 : 0
    },
    finalize: nil,
    closure_callback: nil,
    closure_marshal: nil
)
