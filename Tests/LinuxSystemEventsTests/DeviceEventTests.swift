import Foundation
import Glibc
import MainLoopKit
import Testing
import TestSupport

/// Device events: the two datagram formats, hostile datagrams,
/// and accessories and screens end to end under umockdev.
@Suite(.ownThread, .timeLimit(.minutes(2))) struct DeviceEventTests {
    @Test func parsesTheKernelsFormat() {
        let bytes = Array("add@/devices/usb1-1\0ACTION=add\0DEVPATH=/devices/usb1-1\0SUBSYSTEM=usb\0DEVTYPE=usb_device\0".utf8)
        #expect(Uevent.parse(bytes) == Uevent(action: "add", properties: [
            "ACTION": "add", "DEVPATH": "/devices/usb1-1", "SUBSYSTEM": "usb", "DEVTYPE": "usb_device"]))
    }

    @Test func parsesUdevsFormat() {
        let properties = Array("ACTION=remove\0DEVPATH=/devices/usb1-1\0SUBSYSTEM=usb\0ID_SERIAL=Dock_ABC\0".utf8)
        var header = Array("libudev".utf8) + [0, 0xfe, 0xed, 0xca, 0xfe]
        for word in [40, 40, UInt32(properties.count), 0, 0, 0, 0] as [UInt32] {
            header += withUnsafeBytes(of: word.littleEndian, Array.init)
        }
        #expect(header.count == 40)
        #expect(Uevent.parse(header + properties)?.properties["ID_SERIAL"] == "Dock_ABC")
    }

    @Test func refusesWhatIsNotAnEvent() {
        var header = Array("libudev".utf8) + [0, 0xfe, 0xed, 0xca, 0xfe]
        for word in [40, 40, 1_000_000, 0, 0, 0, 0] as [UInt32] { header += withUnsafeBytes(of: word.littleEndian, Array.init) }
        #expect(Uevent.parse(header) == nil, "properties beyond the datagram")
        #expect(Uevent.parse([]) == nil)
        #expect(Uevent.parse(Array("no separator at all".utf8)) == nil)
        #expect(Uevent.parse(Array("add@/x\0ACTION=add\0".utf8)) == nil, "no DEVPATH")
        let invalid: [UInt8] = Array("add@/x\0ACTION=add\0DEVPATH=/x\0KEY=".utf8) + [0xFF, 0xFE, 0]
        #expect(Uevent.parse(invalid) == nil, "invalid UTF-8")
        let many = "add@/x\0ACTION=add\0DEVPATH=/x\0" + (0..<300).map { "K\($0)=v\0" }.joined()
        #expect(Uevent.parse(Array(many.utf8)) == nil, "more than \(Uevent.maxProperties) properties")
    }

    /// Two receivers of one model share an `ID_SERIAL` (udev gives
    /// serial-less devices of a model the same one): they are two
    /// accessories, and unplugging one leaves the other connected. A device
    /// whose id the center refuses (over its 256 bytes) is not tracked, so
    /// it takes none of the 1,024 places.
    @Test(.enabled(if: NetlinkUevents.available, "no NETLINK_KOBJECT_UEVENT socket here"))
    func identicalDevicesAreTwoAndARefusedOneTakesNoPlace() throws {
        let thread = try LoopThread.start()
        defer { try? thread.stopAndJoin() }
        let problems = Locked<[String]>([])
        let values = try OffLoopReleaseTests.onLoop(thread) { () throws -> [JSONValue?] in
            let application = try Application(loop: thread.loop)
            let center = application.notifications
            let source = try DeviceEventSource(loop: thread.loop, drmDirectory: "/nonexistent",
                                               post: { try center.post($0) }) { text in problems.mutate { $0.append(text) } }
            func usb(_ action: String, _ path: String, serial: String) -> Uevent {
                Uevent(action: action, properties: ["ACTION": action, "SUBSYSTEM": "usb", "DEVTYPE": "usb_device",
                                                    "DEVPATH": path, "ID_SERIAL": serial])
            }
            source.handle(usb("add", "/devices/pci0/usb1/1-1", serial: "Receiver"))
            source.handle(usb("add", "/devices/pci0/usb1/1-2", serial: "Receiver"))
            source.handle(usb("remove", "/devices/pci0/usb1/1-1", serial: "Receiver"))
            let long = String(repeating: "S", count: 300)
            for port in 0..<1100 { source.handle(usb("add", "/devices/pci0/usb2/2-\(port)", serial: long)) }
            source.handle(usb("add", "/devices/pci0/usb3/3-1", serial: "Pen"))
            return [try center.currentValue(of: .accessory)]
        }
        #expect(values[0] == .object(["Receiver@1-2": true, "Pen@3-1": true]), "the second receiver stays: \(values)")
        #expect(!problems.value.contains { $0.contains("more than") }, "refused devices took places")
        #expect(problems.value.contains { $0.contains("accessory not posted") })
    }

    /// A USB device plugged in reaches the active app; while suspended, a
    /// screen connected by a hotplug event, the dock unplugged and a pen
    /// plugged in and out produce, on foreground, exactly one notification
    /// each for the screen, its mode and the dock (none for the pen), between
    /// willEnterForeground and didBecomeActive. umockdev's testbed provides
    /// /sys and the uevents, preloaded into the driver and `mainloop run`,
    /// as upower's and iio-sensor-proxy's integration tests do.
    @Test func accessoriesAndScreensEndToEndUnderUmockdev() throws {
        let wrapper = "/usr/bin/umockdev-wrapper"
        try #require(access(wrapper, X_OK) == 0, "umockdev is installed by scripts/setup.sh")
        let repository = URL(fileURLWithPath: "\(#filePath)").deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let directory = TemporaryDirectory()
        let result = try runToCompletion(wrapper, ["/usr/bin/python3",
                                                   repository.appendingPathComponent("Tests/UmockdevDriver/device_events.py").path,
                                                   BuiltTool.path, directory.path])
        #expect(result.status == 0, "\(result.output)\(result.error)")
        #expect(result.output.hasSuffix("OK\n"), "\(result.output)")
    }
}

/// Whether this machine gives a NETLINK_KOBJECT_UEVENT socket (a container may not).
enum NetlinkUevents {
    static let available: Bool = {
        let descriptor = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 15)  // NETLINK_KOBJECT_UEVENT
        guard descriptor >= 0 else { return false }
        close(descriptor)
        return true
    }()
}
