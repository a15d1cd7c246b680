import FerryCore
import FerryKit
import FerryListening
import Foundation
import Hummingbird

/// What the player needs of the daemon: where the listener is (`/playback`, `played`), an
/// episode's chapters and transcript, Up Next, and deleting a heard episode's file.
struct ListeningRoutes {
    let podcasts: PodcastLibrary

    func register(on api: RouterGroup<FerryRequestContext>) {
        api.post("podcasts/:id/played") { _, context in
            let id = try context.parameters.podcastID()
            return try jsonResponse(try await podcasts.markPlayed(id))
        }
        api.put("episodes/:id/playback") { request, context in
            let id = try context.parameters.mediaID("an episode")
            let update = try await request.decodeJSON(PlaybackUpdate.self, context: context)
            return try jsonResponse(try await podcasts.updatePlayback(.episode, id: id, update))
        }
        api.put("tracks/:id/playback") { request, context in
            let id = try context.parameters.mediaID("a song's track")
            let update = try await request.decodeJSON(PlaybackUpdate.self, context: context)
            return try jsonResponse(try await podcasts.updatePlayback(.track, id: id, update))
        }
        api.get("episodes/:id/chapters") { _, context in
            let id = try context.parameters.mediaID("an episode")
            return try jsonResponse(ChapterList(chapters: try await podcasts.chapters(episode: id)))
        }
        api.get("episodes/:id/transcript") { _, context in
            let id = try context.parameters.mediaID("an episode")
            return try jsonResponse(Transcript(cues: try await podcasts.transcript(episode: id)))
        }
        api.delete("episodes/:id/file") { _, context in
            let id = try context.parameters.mediaID("an episode")
            return try jsonResponse(try await podcasts.deleteEpisodeFile(id))
        }
        api.get("up-next") { _, _ in try jsonResponse(try await podcasts.upNext()) }
        api.put("up-next") { request, context in
            let order = try await request.decodeJSON(UpNextOrder.self, context: context)
            return try jsonResponse(try await podcasts.setUpNext(order))
        }
    }
}
