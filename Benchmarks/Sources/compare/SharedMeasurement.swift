/// The numbers of rows that are measured together (interleaved, so they see
/// the same moments of the VM), each taken once by its own row: a row whose
/// number is waiting takes it; otherwise it starts a new measurement, whose
/// numbers for the other rows wait for them. The wake, actor and fd readiness
/// rows are measured so.
struct SharedMeasurement<Row: Hashable> {
    private var waiting: [Row: Double] = [:]

    /// `row`'s number from the last measurement if no one took it yet, else
    /// from a new one (`measure` returns the number of each row it measured).
    mutating func take(_ row: Row, measure: () throws -> [Row: Double]) rethrows -> Double {
        if waiting[row] == nil { waiting.merge(try measure()) { _, new in new } }
        return waiting.removeValue(forKey: row)!
    }
}
