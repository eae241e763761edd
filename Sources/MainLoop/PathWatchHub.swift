import Glibc

/// One inotify descriptor per loop and priority, shared by its
/// ``PathSource``s (a user has 128 inotify instances by default, so one
/// per source would run out), read on the loop like any descriptor.
///
/// Watches are kept per watch descriptor with the sources that use it: two
/// sources on one directory share the kernel's watch, which every watch
/// asks for with the same mask (sources filter what they want), so no
/// source's mask can narrow another's. Loop thread only.
final class PathWatchHub: LoopRegistered {
    let core: LoopCore
    let priority: LoopPriority
    let inotifyFD: Int32
    private var readable: FileDescriptorSource?
    /// The sources using each watch descriptor.
    private var watchers: [Int32: [PathSource]] = [:]
    /// A process that keeps changing watched directories cannot keep the
    /// loop here: the rest is read in the next turn.
    private var reader = InotifyRecordReader(readsPerTurn: 16)
    /// The sources a batch touched, kept between batches (no allocation
    /// per batch in steady state).
    private var touched: [PathSource] = []

    /// Every change any source may want, and the watched directory's own
    /// removal (the sources then find their way again).
    static let mask = UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_CLOSE_WRITE | IN_MODIFY
                             | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
    init(core: LoopCore, priority: LoopPriority) throws(MainLoopError) {
        self.core = core
        self.priority = priority
        inotifyFD = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard inotifyFD >= 0 else { throw systemError("inotify_init1") }
        do throws(MainLoopError) {
            readable = try FileDescriptorSource(core: core, fileDescriptor: inotifyFD, interest: .read,
                                                priority: priority) { [unowned self] _ in readEvents() }
        } catch {
            close(inotifyFD)
            throw error
        }
    }

    /// Watches `directory` for `source`: the watch descriptor, or the
    /// kernel's errno negated.
    func watch(_ directory: String, for source: PathSource) -> Int32 {
        let descriptor = inotify_add_watch(inotifyFD, directory, Self.mask)
        guard descriptor >= 0 else { return -errno }
        watchers[descriptor, default: []].append(source)
        return descriptor
    }

    /// `source` no longer uses `descriptor`; the watch goes once nobody does.
    func unwatch(_ descriptor: Int32, for source: PathSource) {
        guard var users = watchers[descriptor] else { return }
        users.removeAll { $0 === source }
        if users.isEmpty {
            watchers[descriptor] = nil
            inotify_rm_watch(inotifyFD, descriptor)
        } else {
            watchers[descriptor] = users
        }
    }

    private func readEvents() {
        touched.removeAll(keepingCapacity: true)
        var overflowed = false
        reader.readQueued(from: inotifyFD) { record in
            if record.isQueueOverflow {
                overflowed = true
                return
            }
            guard let users = watchers[record.watchDescriptor] else { return }
            if record.mask & UInt32(IN_IGNORED) != 0 { watchers[record.watchDescriptor] = nil }
            for source in users {
                source.received(mask: record.mask, name: record.name, on: record.watchDescriptor)
                if !touched.contains(where: { $0 === source }) { touched.append(source) }
            }
        }
        if overflowed {
            for users in watchers.values {
                for source in users where !touched.contains(where: { $0 === source }) { touched.append(source) }
            }
            touched.forEach { $0.overflowed() }
        }
        // Delivered after the batch is read: handlers may add and remove
        // sources (themselves included) while they run.
        for index in touched.indices where !touched[index].isRemoved { touched[index].deliverPending() }
        touched.removeAll(keepingCapacity: true)
    }

    func releaseLoopResources() {
        guard let readable else { return }
        readable.releaseLoopResources()
        self.readable = nil
        // Closing the descriptor ends every watch on it.
        close(inotifyFD)
        watchers.removeAll()
    }
}
