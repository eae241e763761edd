/// One device event from the kernel or from udev (`NETLINK_KOBJECT_UEVENT`):
/// the action (`add`, `remove`, `change`, …) and the properties
/// (`SUBSYSTEM`, `DEVTYPE`, `DEVPATH`, `ID_SERIAL`, `HOTPLUG`, …).
public struct Uevent: Equatable, Sendable {
    /// `add`, `remove`, `change`, `bind`, …
    public var action: String
    /// Every `KEY=VALUE` property.
    public var properties: [String: String]

    /// The most properties one event may carry; more is a malformed event.
    public static let maxProperties = 256

    /// An event with these parts.
    public init(action: String, properties: [String: String]) {
        self.action = action
        self.properties = properties
    }

    /// Parses a datagram in either of the two formats on the socket: the
    /// kernel's (`ACTION@DEVPATH\0KEY=VALUE\0…`) and udev's (a `libudev\0`
    /// header, magic 0xfeedcafe, then the properties at the offset the
    /// header gives). Nil for anything else: a datagram is untrusted input
    /// and is never read beyond its bounds.
    public static func parse(_ bytes: [UInt8]) -> Uevent? {
        let properties: ArraySlice<UInt8>
        if bytes.starts(with: Array("libudev".utf8) + [0]) {
            guard bytes.count >= 24, bytes[8...11].elementsEqual([0xfe, 0xed, 0xca, 0xfe]) else { return nil }
            func word(_ offset: Int) -> Int {
                Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
            }
            let offset = word(16), length = word(20)
            guard offset >= 24, length >= 0, offset <= bytes.count, length <= bytes.count - offset else { return nil }
            properties = bytes[offset..<(offset + length)]
        } else {
            guard let end = bytes.firstIndex(of: 0), bytes[..<end].contains(UInt8(ascii: "@")) else { return nil }
            properties = bytes[(end + 1)...]
        }
        var fields: [String: String] = [:]
        for field in properties.split(separator: 0) {
            guard let equals = field.firstIndex(of: UInt8(ascii: "=")), fields.count < maxProperties,
                  let key = String(validating: field[field.startIndex..<equals], as: UTF8.self),
                  let value = String(validating: field[(equals + 1)...], as: UTF8.self) else { return nil }
            fields[key] = value
        }
        guard let action = fields["ACTION"], fields["DEVPATH"] != nil else { return nil }
        return Uevent(action: action, properties: fields)
    }
}
