/// Subjects (in one slab for every keyed kind) and symbols (collected by
/// mark and sweep).
extension CoalescingTable {
    /// Stores a new subject of the kind at `slot`, at the kind's default.
    mutating func insertSubject(_ name: String, slot: Int) -> Int32 {
        let index = Int32(subjectRecords.insert(SubjectRecord(slot: Int32(slot), value: kinds[slot].defaultValue)))
        if subjectInfo.count < subjectRecords.capacity {
            subjectInfo.append(SubjectInfo(name: name))  // a new position
        } else {
            subjectInfo[Int(index)].name = name  // a reused one
        }
        subjects[slot].indexByName[name] = index
        return index
    }

    /// Frees the subject if it is back at its kind's default, holds nothing
    /// and is not pinned (BEHAVIOUR.md §4: it is then the same as one never seen).
    mutating func releaseSubjectIfIdle(_ index: Int32) {
        let position = Int(index)
        guard subjectRecords[position].isLive, !subjectRecords[position].isPinned,
              !subjectRecords[position].isHeld else { return }
        let slot = Int(subjectRecords[position].slot)
        guard subjectRecords[position].value == kinds[slot].defaultValue else { return }
        subjects[slot].indexByName[subjectInfo[position].name] = nil
        subjectRecords.free(position, placeholder: .free)
        subjectInfo[position] = .free
    }

    /// The most entries a list the flush empties keeps room for once a
    /// burst's storage is given back.
    static var keptBurstCapacity: Int { 4096 }

    /// Whether most of a large subject store is free (at least 1,024
    /// positions, more than half of them free).
    var subjectStorageIsSparse: Bool {
        subjectRecords.capacity >= 1024 && subjectRecords.freeCount > subjectRecords.capacity / 2
    }

    /// Whether a burst left storage that ``giveBackStorage()`` would give
    /// back (see ``finishFlush()``).
    var burstLeftStorage: Bool {
        subjectStorageIsSparse || flushedSubjects.capacity > Self.keptBurstCapacity || flushEntries.storageCapacity > Self.keptBurstCapacity
            || subjects.contains { $0.heldKeys.capacity > Self.keptBurstCapacity }
    }

    /// Gives back the storage a burst of subjects left behind, when nothing
    /// is held (a held entry names a subject by its index):
    /// - the flush's lists keep room for at most 4,096 entries;
    /// - a mostly free subject store is compacted (subjects nothing outside
    ///   the table refers to move down into freed positions; a pinned
    ///   subject, whose index a prepared event holds, stays where it is)
    ///   and shrunk, and each kind's name index is rebuilt at its size.
    /// O(n log n) in the subject positions, once per burst.
    /// - Returns: whether storage was given back (the caller may then
    ///   return the freed memory to the kernel, e.g. with `malloc_trim`).
    @discardableResult
    public mutating func giveBackStorage() -> Bool {
        guard burstLeftStorage, heldSlots == 0, flushEntries.count == 0 else { return false }
        let kept = Self.keptBurstCapacity
        if flushedSubjects.capacity > kept { flushedSubjects = [] }
        if flushedValues.capacity > kept { flushedValues = [] }
        flushEntries.shrinkIfSparse()
        for slot in subjects.indices where subjects[slot].heldKeys.capacity > kept { subjects[slot].heldKeys = [] }
        guard subjectStorageIsSparse else { return true }
        var moved: [(slot: Int, from: Int, to: Int)] = []
        subjectRecords.compact(isFree: { !$0.isLive }, canMove: { !$0.isPinned }) { record, from, to in
            moved.append((Int(record.slot), from, to))
        }
        for (slot, from, to) in moved {
            subjectInfo[to] = subjectInfo[from]
            subjectInfo[from] = .free
            subjects[slot].indexByName[subjectInfo[to].name] = Int32(to)
        }
        while subjectInfo.count > subjectRecords.capacity { _ = subjectInfo.removeLast() }
        subjectInfo.shrinkIfSparse()
        for slot in subjects.indices where subjects[slot].indexByName.capacity > 4 * max(subjects[slot].indexByName.count, 256) {
            subjects[slot].indexByName = Dictionary(uniqueKeysWithValues: subjects[slot].indexByName.map { ($0.key, $0.value) })
        }
        return true
    }

    /// Frees every symbol nothing refers to any more.
    mutating func sweepSymbols() {
        var live = symbols.pinnedMarks()
        func mark(_ value: EventValue) { if let id = value.symbolID { live[Int(id)] = true } }
        func mark(_ held: HeldSlot?) {
            if let held {
                mark(held.atSuspension)
                mark(held.current)
            }
        }
        for slot in kinds.indices {
            mark(kinds[slot].value)
            mark(kinds[slot].held)
        }
        for index in 0..<subjectRecords.capacity where subjectRecords[index].isLive {
            mark(subjectRecords[index].value)  // also the held value after the latest held event
            if subjectRecords[index].isHeld { mark(subjectRecords[index].valueAtSuspension) }
        }
        symbols.sweep(keeping: live)
    }

    /// How much storage the table keeps for subjects and bursts (tests).
    struct StorageFootprint: CustomStringConvertible {
        /// Subject positions, live or free.
        let subjectPositions: Int
        /// Subject records the storage has room for.
        let subjectStorage: Int
        /// The largest name index's capacity.
        let nameIndexCapacity: Int
        /// The largest held-keys list's capacity (keyDiff kinds; the held
        /// list itself is linked through the records and keeps nothing).
        let heldKeysCapacity: Int
        /// Flush entries the storage has room for.
        let flushEntryStorage: Int

        var description: String {
            "positions \(subjectPositions), records \(subjectStorage), names \(nameIndexCapacity), "
                + "held keys \(heldKeysCapacity), flush entries \(flushEntryStorage)"
        }
    }

    /// The storage kept now (tests).
    var storage: StorageFootprint {
        StorageFootprint(subjectPositions: subjectRecords.capacity, subjectStorage: subjectRecords.storageCapacity,
                         nameIndexCapacity: subjects.map(\.indexByName.capacity).max() ?? 0,
                         heldKeysCapacity: subjects.map(\.heldKeys.capacity).max() ?? 0,
                         flushEntryStorage: flushEntries.storageCapacity)
    }
}
