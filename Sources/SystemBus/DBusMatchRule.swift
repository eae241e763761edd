/// A D-Bus match rule for signals, built from parts: every value is
/// quoted and escaped, so a value a peer sent (an object path, a name)
/// can never end the rule early or add a key of its own.
///
/// ```swift
/// let rule = DBusMatchRule(sender: ":1.42", path: "/org/freedesktop/UPower/devices/DisplayDevice",
///                          interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
///                          arguments: [0: "org.freedesktop.UPower.Device"])
/// rule.text   // type='signal',sender=':1.42',path='/org/…',…,arg0='org.freedesktop.UPower.Device'
/// ```
public struct DBusMatchRule: Equatable, Sendable, CustomStringConvertible {
    /// The sending connection: a unique name (`:1.42`) or `org.freedesktop.DBus`.
    public var sender: String?
    /// The object path the signal is emitted on.
    public var path: String?
    /// The signal's interface.
    public var interface: String?
    /// The signal's name.
    public var member: String?
    /// String arguments to match, by position (`argN`).
    public var arguments: [Int: String]

    /// A rule for signals; nil parts match anything.
    public init(sender: String? = nil, path: String? = nil, interface: String? = nil, member: String? = nil,
                arguments: [Int: String] = [:]) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }

    /// The rule as the bus reads it.
    public var text: String {
        var parts = ["type='signal'"]
        if let sender { parts.append("sender=" + Self.quoted(sender)) }
        if let path { parts.append("path=" + Self.quoted(path)) }
        if let interface { parts.append("interface=" + Self.quoted(interface)) }
        if let member { parts.append("member=" + Self.quoted(member)) }
        for (index, value) in arguments.sorted(by: { $0.key < $1.key }) { parts.append("arg\(index)=" + Self.quoted(value)) }
        return parts.joined(separator: ",")
    }

    public var description: String { text }

    /// A value in single quotes. Inside quotes the bus takes every
    /// character as it is, backslashes included; a quote is written by
    /// closing the quotes, an escaped quote, and opening them again (the
    /// D-Bus specification's rule, as GDBus and sd-bus write it).
    static func quoted(_ value: String) -> String {
        "'" + value.replacingAll("'", with: #"'\''"#) + "'"
    }

    /// Whether `message` is one this rule selects, judged here rather than
    /// trusting the bus: dbus-daemon delivers a signal addressed to this
    /// connection whatever the rules say, and a rule's well-known sender is
    /// not checked by sd-bus at all.
    func selects(sender: String?, path: String?, interface: String?, member: String?) -> Bool {
        if let wanted = self.sender, wanted != sender { return false }
        if let wanted = self.path, wanted != path { return false }
        if let wanted = self.interface, wanted != interface { return false }
        if let wanted = self.member, wanted != member { return false }
        return true
    }
}

/// The D-Bus specification's syntax for the names and paths this module
/// takes from peers, checked before any is used in a call or a rule.
public enum DBusSyntax {
    /// A valid object path: `/`, or `/` followed by elements of
    /// `[A-Za-z0-9_]`, separated by single slashes, with no trailing slash.
    public static func isObjectPath(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        guard bytes.last != UInt8(ascii: "/") else { return false }
        var previousWasSlash = false
        for byte in bytes {
            if byte == UInt8(ascii: "/") {
                if previousWasSlash { return false }
                previousWasSlash = true
            } else {
                guard isElementByte(byte) else { return false }
                previousWasSlash = false
            }
        }
        return true
    }

    /// A valid unique connection name (`:1.42`): a colon, then two or more
    /// dot-separated elements of `[A-Za-z0-9_-]`, at most 255 bytes.
    public static func isUniqueName(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count <= 255, bytes.first == UInt8(ascii: ":") else { return false }
        let elements = bytes.dropFirst().split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard elements.count >= 2 else { return false }
        return elements.allSatisfy { element in
            !element.isEmpty && element.allSatisfy { isElementByte($0) || $0 == UInt8(ascii: "-") }
        }
    }

    private static func isElementByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
    }

    /// Why `address` is not a D-Bus server address
    /// (`transport:key=value,…`, entries separated by `;`), or nil when it
    /// is one. Checked before connecting, so a typo is named as such rather
    /// than reported as a refused connection.
    public static func addressProblem(_ address: String) -> String? {
        let entries = address.split(separator: ";", omittingEmptySubsequences: true)
        guard !entries.isEmpty else { return "an empty address" }
        for entry in entries {
            guard let colon = entry.firstIndex(of: ":") else {
                return "'\(entry)' has no transport (as in unix:path=/run/dbus/system_bus_socket)"
            }
            let transport = entry[..<colon]
            guard !transport.isEmpty, transport.utf8.allSatisfy({ isElementByte($0) || $0 == UInt8(ascii: "-") }) else {
                return "'\(transport)' is not a transport name"
            }
            let pairs = entry[entry.index(after: colon)...]
            for pair in pairs.split(separator: ",", omittingEmptySubsequences: true) {
                guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                    return "'\(pair)' in '\(entry)' is not key=value"
                }
                guard pair[pair.index(after: equals)...].utf8.allSatisfy(isAddressValueByte) else {
                    return "the value of '\(pair)' has a byte an address must %-escape"
                }
            }
        }
        return nil
    }

    /// The bytes an address value may hold unescaped (the specification's
    /// optionally-escaped set), and `%` for escapes.
    private static func isAddressValueByte(_ byte: UInt8) -> Bool {
        isElementByte(byte) || "-/.\\*%".utf8.contains(byte)
    }
}

extension String {
    /// Every occurrence of `target` replaced (Foundation-free).
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        result.reserveCapacity(utf8.count)
        for character in self {
            if character == target { result += replacement } else { result.append(character) }
        }
        return result
    }
}
