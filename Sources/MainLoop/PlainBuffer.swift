import Glibc

/// Buffers of plain values (no references to count) that grow with
/// `realloc`: glibc moves a large block by remapping its pages, so growing
/// the timer heap or its slot tables to a million entries copies nothing
/// and faults in no page twice (the million-timers rows of `compare`).
/// Out of memory traps, as Swift's own allocation does.
enum PlainBuffer {
    /// An uninitialized buffer of `capacity` values.
    static func allocate<Value>(_: Value.Type, capacity: Int) -> UnsafeMutablePointer<Value> {
        resized(nil, to: capacity)
    }

    /// `buffer` (from this type) holding `capacity` values: the old ones
    /// kept, the rest uninitialized. `buffer` is invalid afterwards.
    static func resized<Value>(_ buffer: UnsafeMutablePointer<Value>?, to capacity: Int) -> UnsafeMutablePointer<Value> {
        precondition(_isPOD(Value.self), "PlainBuffer holds plain values only")
        let bytes = max(1, capacity) * MemoryLayout<Value>.stride
        guard let memory = realloc(buffer.map { UnsafeMutableRawPointer($0) }, bytes) else {
            fatalError("PlainBuffer: out of memory for \(bytes) bytes")
        }
        return memory.bindMemory(to: Value.self, capacity: max(1, capacity))
    }

    /// Frees `buffer` (from this type).
    static func free<Value>(_ buffer: UnsafeMutablePointer<Value>) {
        Glibc.free(buffer)
    }
}
