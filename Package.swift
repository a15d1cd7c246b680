// swift-tools-version:6.2
import PackageDescription

#if canImport(Glibc)
import Glibc
#endif

/// How the `ferry` binary is linked on Linux. With the Swift runtime and every library linked in
/// statically it holds ~140,000 relative relocations and exports ~46,000 symbols, and each
/// process pays for both: the loader applies the relocations from a 3.3 MiB table that then
/// stays resident, and the runtime's start-up `dladdr` walks the symbols. Nothing looks symbols
/// up in it, so it exports none; and where glibc can load packed relocations (DT_RELR, glibc
/// 2.36) they are packed, which takes lld (shipped with Swift toolchains). Measured in
/// bench/reports/2026-11-startup-and-resident-size.md ("No exported symbols, packed relocations").
let ferryLinkerFlags: [String] = {
    #if canImport(Glibc)
    var flags = ["-Xlinker", "--no-export-dynamic"]
    var name = [CChar](repeating: 0, count: 64)  // "glibc 2.36"
    _ = confstr(Int32(_CS_GNU_LIBC_VERSION), &name, name.count)
    let version = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: " ").last?.split(separator: ".").compactMap { Int($0) } ?? []
    if !version.lexicographicallyPrecedes([2, 36]) {
        flags += ["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"]
    }
    return flags
    #else
    return []
    #endif
}()

let package = Package(
    name: "Ferry",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "ferry", targets: ["ferry"]),
        // For other programs: the daemon's client and API types.
        .library(name: "FerryKit", targets: ["FerryKit"]),
        // Apple's URLSession API, background sessions included, for code written for Apple's
        // platforms: it builds on Linux by importing this module.
        .library(name: "FerryURLSession", targets: ["FerryURLSession"]),
        // For the fuzz targets and the feed benchmark (Fuzz/, a package of its own): the parsers
        // of untrusted input. Everything else in FerryCore is `package`: Ferry's own targets' only.
        .library(name: "FerryCore", targets: ["FerryCore"]),
        .library(name: "FerryFeeds", targets: ["FerryFeeds"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // Ferry's own small CA and the certificates of the listeners beyond loopback.
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
    ],
    targets: [
        // What the daemon, its clients and the feed parser all speak: transfers, podcasts,
        // events, errors, the API's bodies. No networking: the engine and the parser do not
        // depend on a client library.
        .target(name: "FerryModel"),
        .target(
            name: "FerryKit",
            dependencies: [
                "FerryModel",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "FerryURLSession",
            dependencies: [
                "FerryKit",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .target(
            name: "FerryCore",
            dependencies: [
                "FerryModel",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        // The feed parser: RSS, Atom, OPML and HTML in, plain values out; no I/O, so it can be
        // read, fuzzed and measured on its own.
        .target(
            name: "FerryFeeds",
            dependencies: ["FerryModel", .product(name: "Crypto", package: "swift-crypto")]
        ),
        // What a listener uses, on top of the transfer engine: the catalog, podcasts, playback,
        // Up Next and sync with phones (their tables, which it registers, live in the daemon's journal).
        .target(
            name: "FerryListening",
            dependencies: [
                "FerryCore",
                "FerryFeeds",
                "FerryKit",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // Several daemons on one queue: the journal in PostgreSQL (leases, fencing, one event
        // sequence woken by LISTEN/NOTIFY), and the listening library beside it.
        .target(
            name: "FerryCluster",
            dependencies: [
                "FerryCore",
                "FerryKit",
                "FerryListening",
                "FerryFeeds",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .systemLibrary(name: "CMalloc"),
        .target(
            name: "FerryServer",
            dependencies: [
                "CMalloc",
                "FerryCore",
                "FerryFeeds",
                "FerryListening",
                "FerryKit",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            exclude: ["Resources"],
            plugins: ["EmbedResources"]
        ),
        // Compiles FerryServer's Resources folder into the binary (no resource bundle at run time).
        .plugin(name: "EmbedResources", capability: .buildTool(), dependencies: ["ResourceEmbedder"]),
        .executableTarget(name: "ResourceEmbedder"),
        .executableTarget(
            name: "ferry",
            dependencies: [
                "FerryServer",
                "FerryCore",
                "FerryListening",
                "FerryCluster",
                "FerryKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            linkerSettings: [.unsafeFlags(ferryLinkerFlags)]
        ),
        .executableTarget(name: "PodcastFetcher", dependencies: ["FerryKit"], path: "Examples/PodcastFetcher"),
        // The URLSession tutorials' Half Tunes networking code, its imports changed: Swift 5 as written.
        .executableTarget(
            name: "HalfTunes", dependencies: ["FerryURLSession"], path: "Examples/HalfTunes",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // A download list keyed by taskIdentifier across launches, as the Chinese URLSession
        // tutorials write their TaskManager.
        .executableTarget(
            name: "TaskManager", dependencies: ["FerryURLSession"], path: "Examples/TaskManager",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .target(
            name: "FerryTestSupport",
            dependencies: [
                "FerryCore",
                "FerryFeeds",
                "FerryListening",
                "FerryServer",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/FerryTestSupport",
            resources: [.copy("Certificates")]
        ),
        .testTarget(
            name: "FerryCoreTests",
            dependencies: ["FerryCore", "FerryTestSupport", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(
            name: "FerryFeedsTests",
            dependencies: ["FerryFeeds", "FerryKit"]
        ),
        .testTarget(
            name: "FerryListeningTests",
            dependencies: ["FerryListening", "FerryFeeds", "FerryCore", "FerryTestSupport", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(
            name: "FerryServerTests",
            dependencies: [
                "FerryServer", "FerryListening", "FerryTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "FerryClusterTests",
            dependencies: [
                "FerryCluster", "FerryCore", "FerryListening", "FerryFeeds", "FerryTestSupport", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "FerryKitTests",
            dependencies: ["FerryKit", "FerryServer", "FerryTestSupport"]
        ),
        .testTarget(
            name: "FerryURLSessionTests",
            dependencies: ["FerryURLSession", "FerryTestSupport"]
        ),
        .testTarget(
            name: "FerryCLITests",
            dependencies: ["ferry", "FerryCore", "FerryListening", "FerryServer", "FerryTestSupport", .product(name: "GRDB", package: "GRDB.swift")]
        ),
    ]
)
