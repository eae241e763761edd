/// A binary min-heap of timers keyed by (deadline, sequence), with O(log n)
/// removal through each timer's stored index. Loop thread only.
struct TimerHeap {
    private(set) var timers: [LoopTimer] = []
    private var nextSequence: UInt64 = 0

    var first: LoopTimer? { timers.first }

    mutating func insert(_ timer: LoopTimer) {
        timer.sequence = nextSequence
        nextSequence &+= 1
        timer.heapIndex = timers.count
        timers.append(timer)
        siftUp(timers.count - 1)
    }

    @discardableResult
    mutating func popFirst() -> LoopTimer? {
        guard let top = timers.first else { return nil }
        remove(top)
        return top
    }

    mutating func remove(_ timer: LoopTimer) {
        let index = timer.heapIndex
        precondition(index >= 0 && index < timers.count && timers[index] === timer, "timer not in this heap")
        let last = timers.count - 1
        if index != last {
            timers.swapAt(index, last)
            timers[index].heapIndex = index
        }
        timers.removeLast()
        timer.heapIndex = -1
        if index < timers.count {
            siftDown(index)
            siftUp(index)
        }
    }

    mutating func removeAll() {
        for timer in timers { timer.heapIndex = -1 }
        timers.removeAll()
    }

    private func ordered(_ a: LoopTimer, before b: LoopTimer) -> Bool {
        a.deadline != b.deadline ? a.deadline < b.deadline : a.sequence < b.sequence
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard ordered(timers[child], before: timers[parent]) else { return }
            timers.swapAt(child, parent)
            timers[child].heapIndex = child
            timers[parent].heapIndex = parent
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < timers.count else { return }
            let right = left + 1
            var best = left
            if right < timers.count, ordered(timers[right], before: timers[left]) { best = right }
            guard ordered(timers[best], before: timers[parent]) else { return }
            timers.swapAt(best, parent)
            timers[best].heapIndex = best
            timers[parent].heapIndex = parent
            parent = best
        }
    }
}
