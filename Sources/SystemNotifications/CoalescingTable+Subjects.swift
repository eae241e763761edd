/// Subjects (in one slab for every keyed kind) and symbols (collected by
/// mark and sweep).
extension CoalescingTable {
    /// Stores a new subject of the kind at `slot`, at the kind's default.
    mutating func insertSubject(_ name: String, slot: Int) -> Int32 {
        let index = Int32(subjectRecords.insert(SubjectRecord(name: name, slot: Int32(slot), value: kinds[slot].defaultValue)))
        subjects[slot].indexByName[name] = index
        return index
    }

    /// Whether `index` is a stored subject of the kind at `slot`.
    func isLiveSubject(_ index: Int32, slot: Int) -> Bool {
        index >= 0 && Int(index) < subjectRecords.capacity && subjectRecords[Int(index)].isLive
            && subjectRecords[Int(index)].slot == Int32(slot)
    }

    /// Frees the subject if it is back at its kind's default, holds nothing
    /// and is not pinned (SPEC §4: it is then the same as one never seen).
    mutating func releaseSubjectIfIdle(_ index: Int32) {
        // Checked in place (a copy of the record would retain its name and details).
        let kinds = self.kinds
        let idle = subjectRecords.withUnsafeMutableBufferPointer { records -> Bool in
            let record = records.baseAddress! + Int(index)
            return record.pointee.isLive && !record.pointee.isPinned && record.pointee.held == nil
                && record.pointee.value == kinds[Int(record.pointee.slot)].defaultValue
        }
        guard idle else { return }
        let record = subjectRecords[Int(index)]
        subjects[Int(record.slot)].indexByName[record.name] = nil
        subjectRecords.free(Int(index), placeholder: SubjectRecord(name: "", slot: -1, value: .null, isLive: false))
    }

    /// Frees every symbol nothing refers to any more.
    mutating func sweepSymbols() {
        let kinds = self.kinds, records = subjectRecords.elements
        symbols.sweep { mark in
            func markValue(_ value: EventValue) { if let id = value.symbolID { mark(id) } }
            func markHeld(_ held: HeldSlot?) {
                if let held {
                    markValue(held.atSuspension)
                    markValue(held.current)
                }
            }
            for kind in kinds {
                markValue(kind.value)
                markHeld(kind.held)
            }
            for record in records where record.isLive {
                markValue(record.value)
                markHeld(record.held)
            }
        }
    }
}
