// MainLoopKit: one import for a Linux service built on MainLoop.
//
// Re-exports the loop, the lifecycle and its notification center, the
// JSON values of payloads, the request vocabulary, the Linux sources, the
// control socket, the service parts and swift-log's `Logger` (which the
// parts log through). The opt-in integrations (MainLoopMetrics,
// MainLoopServiceLifecycle) are separate products with their own imports.
@_exported import AppLifecycle
@_exported import ControlSocket
@_exported import EngineWire
@_exported import FileSupport
@_exported import LinuxSystemEvents
@_exported import Logging
@_exported import MainLoop
@_exported import MainLoopJSON
@_exported import ServiceKit
@_exported import ServiceLogging
@_exported import SystemBus
@_exported import SystemNotifications
