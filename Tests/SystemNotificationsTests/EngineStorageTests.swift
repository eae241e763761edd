@testable import SystemNotifications
import Testing

/// The engine's own storage (``OwnedArray``, ``FreeListArray``): elements
/// kept in order across growth, removed in place, and every element
/// destroyed exactly once (counted with a class whose deinit counts).
@Suite(.timeLimit(.minutes(2))) struct EngineStorageTests {
    final class Tracked {
        let value: Int
        let onDeinit: () -> Void
        init(_ value: Int, onDeinit: @escaping () -> Void) {
            self.value = value
            self.onDeinit = onDeinit
        }
        deinit { onDeinit() }
    }

    final class Count { var value = 0 }

    @Test func ownedArrayKeepsOrderAcrossGrowthAndFreesEveryElement() {
        let destroyed = Count()
        do {
            var array = OwnedArray<Tracked>()
            for value in 0..<100 { array.append(Tracked(value) { destroyed.value += 1 }) }
            #expect(array.count == 100)
            #expect(array.indices.map { array[$0].value } == Array(0..<100))
            array[7] = Tracked(700) { destroyed.value += 1 }
            #expect(destroyed.value == 1, "the replaced element is destroyed")
            #expect(array[7].value == 700)
        }
        #expect(destroyed.value == 101, "deinit destroys what is left")
    }

    @Test func ownedArrayRemovesInPlaceAndIsReusable() {
        let destroyed = Count()
        var array = OwnedArray<Tracked>()
        for value in 0..<10 { array.append(Tracked(value) { destroyed.value += 1 }) }
        array.removeAll { $0.value % 3 == 0 }
        #expect(array.indices.map { array[$0].value } == [1, 2, 4, 5, 7, 8])
        #expect(destroyed.value == 4)
        array.removeAll()
        #expect(array.count == 0)
        #expect(destroyed.value == 10)
        array.append(Tracked(42) { destroyed.value += 1 })
        #expect(array[0].value == 42)
    }

    @Test func freeListReusesFreedPositions() {
        var list = FreeListArray<String>()
        let first = list.insert("a"), second = list.insert("b")
        list.free(first, placeholder: "")
        #expect(list.insert("c") == first, "a freed position is reused")
        #expect(list[second] == "b")
        #expect(list[first] == "c")
        #expect(list.capacity == 2)
    }
}
