import SystemNotifications

/// Identifies an observer for ``SystemNotificationCenter/removeObserver(_:)``.
public struct NotificationObserverToken: Hashable, Sendable {
    let id: Int
}

/// An observer's body, in a class so a delivery can borrow it.
final class ObserverBox {
    let id: Int
    let body: (SystemNotification) -> Void
    init(id: Int, _ body: @escaping (SystemNotification) -> Void) {
        self.id = id
        self.body = body
    }
}

/// One registered observer, as the delivery loop reads it.
struct ObserverEntry {
    let id: Int
    /// The kind slot observed, or -1 for every kind.
    let slot: Int
    /// A view of a box owned by ``NotificationObservers/owners``: a box
    /// leaves `owners` only when no delivery runs, so the view is always
    /// valid. In the delivery block, an observer removed while a delivery
    /// runs has its box replaced by the registry's `skipped` box.
    var box: Unmanaged<ObserverBox>
}

/// Notification observers in one contiguous block of the registry's own
/// memory, grouped by kind slot (every-kind observers last), so a delivery
/// walks it and calls each body in place: no copy of the list and no
/// reference counting per call (a closure loaded from an array element is
/// retained and released around every call, one borrowed from a box is
/// not, and an array's buffer is retained for every walk).
///
/// Changes made while a delivery runs (an observer that adds or removes
/// observers) are deferred, so the buffer never moves under a delivery: an
/// observer added meanwhile gets nothing from the delivery in progress, and
/// one removed meanwhile is skipped at once (it gets nothing further): its
/// entries in the block now call a box that does nothing, so the walk
/// itself checks nothing per observer.
/// Loop thread only; a class held by the application, so delivering
/// never copies it. Every field is loop-thread only, so none pays a dynamic
/// exclusivity check (`@exclusivity(unchecked)`: the live notification
/// rows of `compare`, probe `live`).
final class NotificationObservers {
    /// Grouped by slot; `slot -1` (every kind) at the end. Rebuilt (a new
    /// block) only when no delivery runs, so a delivery's view never moves.
    @exclusivity(unchecked) private var entries: ContiguousArray<ObserverEntry> = []
    /// What deliveries read, in memory the registry owns: for each slot
    /// with observers of its own, a run of them followed by the every-kind
    /// observers; then one run of the every-kind observers alone, which
    /// every other slot delivers to. A delivery is then one walk of one
    /// run (two walks, and the check between them, show in the live
    /// notification rows of `compare`). The every-kind entries are repeated once
    /// per slot that has observers of its own: a few entries, since a
    /// slot is a kind.
    @exclusivity(unchecked) private var block = UnsafeMutableBufferPointer<ObserverEntry>(start: nil, count: 0)
    /// Owns every box that `entries` (or `addedMeanwhile`) refers to. An
    /// array, searched only when an observer is removed: a dictionary's
    /// first use cost every start-up 0.1 million instructions of run-time
    /// generic instantiation.
    @exclusivity(unchecked) private var owners: ContiguousArray<ObserverBox> = []
    /// `ranges[slot]` is the run of `block` a notification of the slot is
    /// delivered to (`slotCount` of them, in the registry's own memory).
    @exclusivity(unchecked) private var ranges = UnsafeMutableBufferPointer<Range<Int>>(start: nil, count: 0)
    /// The run of `block` holding only the every-kind observers: what a
    /// slot past `ranges` is delivered to.
    @exclusivity(unchecked) private var everyKind: Range<Int> = 0..<0
    /// How many deliveries are running (nested when an observer posts).
    @exclusivity(unchecked) private var deliveries = 0
    /// Removed while a delivery ran: skipped, then dropped afterwards.
    @exclusivity(unchecked) private var removedMeanwhile: Set<Int> = []
    /// What a removed observer's entries in `block` call until the
    /// deliveries end: nothing.
    private let skipped = ObserverBox(id: -1) { _ in }
    /// Added while a delivery ran: inserted afterwards.
    @exclusivity(unchecked) private var addedMeanwhile: [ObserverEntry] = []
    /// Whether a change waits for the deliveries to end.
    @exclusivity(unchecked) private var hasDeferredChanges = false
    @exclusivity(unchecked) private var nextID = 0
    @exclusivity(unchecked) private var slotCount = 0

    /// How many observers are registered (including those added during a
    /// delivery, excluding those removed during one).
    var count: Int { entries.count + addedMeanwhile.count - removedMeanwhile.count }

    /// Makes room for `count` kind slots.
    func ensureSlots(_ count: Int) {
        guard count > slotCount else { return }
        slotCount = count
        rebuildRanges()
    }

    /// Adds an observer of `slot` (nil: every kind).
    func add(slot: Int?, _ body: @escaping (SystemNotification) -> Void) -> NotificationObserverToken {
        nextID += 1
        let box = ObserverBox(id: nextID, body)
        owners.append(box)
        let entry = ObserverEntry(id: nextID, slot: slot ?? -1, box: .passUnretained(box))
        if let slot { ensureSlots(slot + 1) }
        if deliveries > 0 {
            addedMeanwhile.append(entry)
            hasDeferredChanges = true
        } else {
            insert(entry)
        }
        return NotificationObserverToken(id: nextID)
    }

    /// Removes an observer; false when unknown or already removed.
    func remove(_ token: NotificationObserverToken) -> Bool {
        if let pending = addedMeanwhile.firstIndex(where: { $0.id == token.id }) {
            addedMeanwhile.remove(at: pending)
            owners.removeAll { $0.id == token.id }
            return true
        }
        guard let index = entries.firstIndex(where: { $0.id == token.id }), !removedMeanwhile.contains(token.id) else {
            return false
        }
        if deliveries > 0 {
            removedMeanwhile.insert(token.id)
            // Every run the observer is in (an every-kind observer is in
            // several): skipped from now on, by this delivery too.
            for index in block.indices where block[index].id == token.id {
                block[index].box = .passUnretained(skipped)
            }
            hasDeferredChanges = true
        } else {
            entries.remove(at: index)
            owners.removeAll { $0.id == token.id }
            rebuildRanges()
        }
        return true
    }

    deinit {
        block.deinitialize()
        block.deallocate()
        ranges.deallocate()
    }

    /// Calls the observers of `notification`'s kind, then those of every
    /// kind, in registration order.
    /// Inlined into the engine's post path (a call and its frame were a
    /// fifth of a live delivery's instructions); the rare work is outlined.
    @inline(__always)
    func deliver(_ notification: SystemNotification) {
        let slot = notification.slot
        deliveries &+= 1
        if slot < ranges.count { call(ranges[slot], notification) } else { call(everyKind, notification) }
        deliveries &-= 1
        // One flag on the hot path; the count is read only when it is set.
        if _slowPath(hasDeferredChanges) { applyDeferredChangesIfOutermost() }
    }

    @inline(__always)
    private func call(_ range: Range<Int>, _ notification: SystemNotification) {
        var index = range.lowerBound
        while index < range.upperBound {
            block[index].box._withUnsafeGuaranteedRef { $0.body(notification) }
            index &+= 1
        }
    }

    @inline(never)
    private func applyDeferredChangesIfOutermost() {
        guard deliveries == 0 else { return }
        hasDeferredChanges = false
        if !removedMeanwhile.isEmpty {
            entries.removeAll { removedMeanwhile.contains($0.id) }
            owners.removeAll { removedMeanwhile.contains($0.id) }
            removedMeanwhile.removeAll()
        }
        let added = addedMeanwhile
        addedMeanwhile.removeAll()
        for entry in added { insert(entry) }
        rebuildRanges()
    }

    /// Inserts after the last observer of the same slot (registration order).
    private func insert(_ entry: ObserverEntry) {
        let position: Int
        if entry.slot < 0 {
            position = entries.endIndex
        } else {
            position = entries.firstIndex { $0.slot < 0 || $0.slot > entry.slot } ?? entries.endIndex
        }
        entries.insert(entry, at: position)
        rebuildRanges()
    }

    /// Lays `block` and `ranges` out again from `entries` (see `block`).
    private func rebuildRanges() {
        let everyKindStart = entries.firstIndex { $0.slot < 0 } ?? entries.endIndex
        let everyKindEntries = entries[everyKindStart...]
        var laidOut = ContiguousArray<ObserverEntry>()
        var runs: [(slot: Int, range: Range<Int>)] = []
        var index = 0
        while index < everyKindStart {
            let slot = entries[index].slot, start = index
            while index < everyKindStart, entries[index].slot == slot { index += 1 }
            let runStart = laidOut.count
            laidOut += entries[start..<index]
            laidOut += everyKindEntries
            runs.append((slot, runStart..<laidOut.count))
        }
        everyKind = laidOut.count..<(laidOut.count + everyKindEntries.count)
        laidOut += everyKindEntries
        block.deinitialize()
        block.deallocate()
        block = .allocate(capacity: laidOut.count)
        _ = block.initialize(from: laidOut)
        ranges.deallocate()
        ranges = .allocate(capacity: slotCount)
        ranges.initialize(repeating: everyKind)
        for run in runs where run.slot < slotCount { ranges[run.slot] = run.range }
    }
}
