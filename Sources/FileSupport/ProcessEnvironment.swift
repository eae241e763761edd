import Glibc

/// The process environment, read as untrusted input: an empty value is
/// the same as an unset one.
public enum ProcessEnvironment {
    /// The value of `name`, or nil when it is unset or empty.
    public static func value(_ name: String) -> String? {
        guard let raw = getenv(name) else { return nil }
        let value = String(cString: raw)
        return value.isEmpty ? nil : value
    }
}
