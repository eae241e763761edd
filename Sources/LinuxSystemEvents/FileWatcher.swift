import FileSupport
import Glibc
import MainLoop

/// Watches files for replacement or modification with inotify, on the loop.
///
/// It watches each file's *directory*, not the file: tools and our own
/// atomic writes replace files by rename, and `ln -sf` replaces
/// /etc/localtime by unlink + symlink, either of which would orphan a watch
/// on the old inode. Events for one file in one read batch are coalesced
/// into one handler call. Loop thread only, except that it may be released
/// on any thread (its cleanup then runs on the loop).
public final class FileWatcher {
    /// Identifies one ``watch(_:handler:)`` for `unwatch(_:)`.
    public struct Token: Hashable, Sendable {
        let id: Int
        let path: String
    }

    /// The loop the watcher runs on.
    public let loop: MainRunLoop
    private let inotifyFD: Int32
    private var source: FileDescriptorSource?
    /// One registered handler: the watch descriptor of its file's directory,
    /// the file's name there. In registration order.
    private struct Handler {
        let id: Int
        let file: WatchedFile
        let body: () -> Void
    }
    /// A file: its directory's watch descriptor and its name there.
    private struct WatchedFile: Equatable {
        let descriptor: Int32
        let name: String
    }
    /// Plain arrays, searched linearly: a service watches a handful of
    /// files (dictionaries of them cost every start-up 0.15 million
    /// instructions of run-time generic instantiation).
    private var handlers: [Handler] = []
    /// A watched directory and its watch descriptor.
    private struct Directory {
        let path: String
        let descriptor: Int32
    }
    private var directories: [Directory] = []
    private var nextID = 0

    /// At most 1 MiB of events a turn (64 reads of 16 KiB): processes that
    /// keep changing files in a watched directory cannot keep the loop
    /// here; the rest is read in the next turn.
    private var reader = InotifyRecordReader(readsPerTurn: 64)

    /// What counts as a change of a file in a watched directory.
    private static let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)

    /// - Throws: ``/MainLoop/MainLoopError/system(operation:errno:)`` when inotify is unavailable.
    public init(loop: MainRunLoop) throws(MainLoopError) {
        self.loop = loop
        inotifyFD = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard inotifyFD >= 0 else { throw .system(operation: "inotify_init1", errno: errno) }
        // Owned weakly: the watcher may be released on another thread, and
        // an event arriving before its cleanup runs on the loop then removes
        // the source instead of calling anyone.
        source = try loop.addFileDescriptor(inotifyFD, interest: .read, priority: .system, owner: self) { watcher, _ in
            watcher.readEvents()
        }
    }

    deinit {
        // Released on any thread: the source goes away on the loop thread,
        // then the descriptor is closed (in that order, so libevent never
        // watches a closed descriptor).
        loop.releaseOnLoop((source, inotifyFD)) { source, descriptor in
            source?.removeIfNeeded()
            close(descriptor)
        }
    }

    /// Calls `handler` on the loop whenever `path` is written, replaced,
    /// created or deleted, and once after the kernel's event queue
    /// overflowed (a change may have been among the events it dropped).
    /// - Throws: ``/MainLoop/MainLoopError/system(operation:errno:)`` when the
    ///   directory cannot be watched (for example, it does not exist).
    @discardableResult
    public func watch(_ path: String, handler: @escaping () -> Void) throws(MainLoopError) -> Token {
        loop.preconditionInLoop()
        let (directory, name) = AtomicFile.split(path)
        let watchDescriptor: Int32
        if let existing = descriptor(of: directory) {
            watchDescriptor = existing
        } else {
            watchDescriptor = inotify_add_watch(inotifyFD, directory, Self.mask)
            guard watchDescriptor >= 0 else { throw .system(operation: "inotify_add_watch(\(directory))", errno: errno) }
            directories.append(Directory(path: directory, descriptor: watchDescriptor))
        }
        nextID += 1
        handlers.append(Handler(id: nextID, file: WatchedFile(descriptor: watchDescriptor, name: name), body: handler))
        return Token(id: nextID, path: path)
    }

    /// Stops calling one handler (idempotent). The directory's watch is
    /// removed once none of its files is watched.
    public func unwatch(_ token: Token) {
        loop.preconditionInLoop()
        guard let index = handlers.firstIndex(where: { $0.id == token.id }) else { return }
        removeWatchIfUnused(handlers.remove(at: index).file.descriptor)
    }

    /// Stops calling every handler registered for `path`; the directory's
    /// watch is removed once none of its files is watched. Returns whether
    /// `path` was watched.
    @discardableResult
    public func unwatch(_ path: String) -> Bool {
        loop.preconditionInLoop()
        let (directory, name) = AtomicFile.split(path)
        guard let descriptor = descriptor(of: directory) else { return false }
        let file = WatchedFile(descriptor: descriptor, name: name)
        guard isWatched(file) else { return false }
        handlers.removeAll { $0.file == file }
        removeWatchIfUnused(descriptor)
        return true
    }

    private func descriptor(of directory: String) -> Int32? {
        directories.first { $0.path == directory }?.descriptor
    }

    private func isWatched(_ file: WatchedFile) -> Bool {
        handlers.contains { $0.file == file }
    }

    private func removeWatchIfUnused(_ descriptor: Int32) {
        guard !handlers.contains(where: { $0.file.descriptor == descriptor }) else { return }
        directories.removeAll { $0.descriptor == descriptor }
        inotify_rm_watch(inotifyFD, descriptor)
    }

    /// The paths watched now, sorted.
    public var watchedPaths: [String] {
        var paths: [String] = []
        for handler in handlers {
            guard let directory = directories.first(where: { $0.descriptor == handler.file.descriptor })?.path else { continue }
            let path = AtomicFile.join(directory, handler.file.name)
            if !paths.contains(path) { paths.append(path) }
        }
        return paths.sorted()
    }

    private func readEvents() {
        // Only watched files are kept (at most one entry per watched file,
        // whatever else changes in their directories).
        var changed: [WatchedFile] = []
        var overflowed = false
        reader.readQueued(from: inotifyFD) { record in
            if record.isQueueOverflow {
                overflowed = true
                return
            }
            let file = WatchedFile(descriptor: record.watchDescriptor, name: record.name)
            guard isWatched(file), !changed.contains(file) else { return }
            changed.append(file)
        }
        // A snapshot: handlers may watch or unwatch while they run.
        let registered = handlers
        if overflowed {
            for handler in registered { handler.body() }
            return
        }
        for file in changed {
            for handler in registered where handler.file == file { handler.body() }
        }
    }
}

/// Bound to its loop's thread: to use it from another thread, carry it in a
/// `LoopBound` and reach it on the loop (`loop.execute`).
@available(*, unavailable)
extension FileWatcher: Sendable {}
