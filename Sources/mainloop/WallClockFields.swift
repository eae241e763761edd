import EngineWire
import Glibc
import MainLoop
import MainLoopJSON
import ServiceLogging

/// The leading fields of each observation line `mainloop run` prints, `at`
/// (Unix seconds to the millisecond) and `time` (ISO 8601 in UTC), made
/// once per millisecond: a busy service prints many lines in one, and
/// formatting the date and building the fields is a large part of each
/// line's cost (`scripts/service-instructions.sh events`). Loop thread only.
final class WallClockFields {
    private var millisecond = Int.min
    private var fields: JSONObject = [:]

    /// The fields for now.
    func now() -> JSONObject {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        let now = spec.tv_sec &* 1000 &+ spec.tv_nsec / 1_000_000
        if now != millisecond {
            millisecond = now
            let (at, iso) = UTCTimestamp.instant(unixSeconds: spec.tv_sec, milliseconds: Int32(spec.tv_nsec / 1_000_000))
            fields = ["at": .number(at), "time": .string(iso)]
        }
        return fields
    }
}

/// The leading field of each observation line of a recorded session,
/// `at`: the loop's instant in seconds since `origin`, exact to the
/// nanosecond (what the replay prints). Made once per instant: the lines
/// of one callback share it. Loop thread only.
final class SessionClockFields {
    private let loop: MainRunLoop
    private let origin: LoopInstant
    @exclusivity(unchecked) private var instant: LoopInstant?
    @exclusivity(unchecked) private var fields: JSONObject = [:]

    init(loop: MainRunLoop, origin: LoopInstant) {
        self.loop = loop
        self.origin = origin
    }

    /// The fields for now.
    func now() -> JSONObject {
        let now = loop.now
        if now != instant {
            instant = now
            fields = ["at": SpecTime.json(.zero + (now - origin))]
        }
        return fields
    }
}
