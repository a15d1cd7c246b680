// swift-tools-version:6.2
// Fuzz targets (libFuzzer) for Ferry's parsers of untrusted input, and the feed parser's
// benchmark harness. A package of its own, so the main Package.swift stays as it is; it depends
// on the main package by path:
//
//     tests/torture/fuzz [SECONDS]   # debug, -sanitize=fuzzer,address, in .build-fuzz; runs each target
//     bench/run --only feeds         # FeedBench, release, in .build-bench beside bench's ferry
//
// See docs/RELIABILITY.md and docs/PERFORMANCE.md.
import Foundation
import PackageDescription

#if canImport(Glibc)
import Glibc
#endif

/// SwiftPM names a path dependency after its folder, so the main package's identity is the
/// name of the folder this one sits in (`main`, `ferry`, ... whatever the clone is called).
let ferry = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

let core: Target.Dependency = .product(name: "FerryCore", package: ferry)
let feeds: Target.Dependency = .product(name: "FerryFeeds", package: ferry)

/// FeedBench measures the parser as the daemon runs it, so it is linked as `ferry` is: a copy of
/// `ferryLinkerFlags` in ../Package.swift (a manifest cannot import another), which says why.
/// Linked otherwise, the process starts 5 MiB larger
/// (bench/reports/2026-11-feeds.md, "The parser against podcastparser").
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
    name: "FerryFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "..")],
    targets: [
        // Each fuzz target defines the `<Target>_main` that SwiftPM links as `main` and runs
        // libFuzzer from it; built with `-sanitize=fuzzer,address -parse-as-library` (see
        // tests/torture/fuzz).
        .target(name: "LibFuzzerDriver"),
        .executableTarget(name: "FuzzFeedParser", dependencies: [feeds, "LibFuzzerDriver"]),
        .executableTarget(name: "FuzzFileNamer", dependencies: [core, "LibFuzzerDriver"]),
        .executableTarget(name: "FuzzContentRange", dependencies: [core, "LibFuzzerDriver"]),
        .executableTarget(name: "FuzzContentDisposition", dependencies: [core, "LibFuzzerDriver"]),
        .executableTarget(name: "FeedBench", dependencies: [feeds], linkerSettings: [.unsafeFlags(ferryLinkerFlags)]),
    ]
)
