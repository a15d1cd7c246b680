import FerryCore
import FerryKit
import FerryListening
import Foundation
import Hummingbird

/// What the player needs of the daemon: where the listener is (`/playback`, `played`), an
/// episode's chapters and transcript, searching what was said, Up Next and playlists, and deleting a heard episode's file.
struct ListeningRoutes {
    let podcasts: PodcastLibrary

    func register(on api: RouterGroup<FerryRequestContext>) {
        api.post("podcasts/:id/played") { _, context in
            let id = try context.parameters.podcastID()
            return try jsonResponse(try await podcasts.as(context.listener).markPlayed(id))
        }
        // Where the listener is, alone: a browser back online asks before it sends a position
        // saved offline, so that it never overwrites a newer one (204: none saved).
        api.get("episodes/:id/playback") { _, context in
            try await playbackResponse(.episode, id: try context.parameters.mediaID("an episode"), context)
        }
        api.get("tracks/:id/playback") { _, context in
            try await playbackResponse(.track, id: try context.parameters.mediaID("a song's track"), context)
        }
        api.put("episodes/:id/playback") { request, context in
            let id = try context.parameters.mediaID("an episode")
            let update = try await request.decodeJSON(PlaybackUpdate.self, context: context)
            return try jsonResponse(try await podcasts.as(context.listener).updatePlayback(.episode, id: id, update))
        }
        api.put("tracks/:id/playback") { request, context in
            let id = try context.parameters.mediaID("a song's track")
            let update = try await request.decodeJSON(PlaybackUpdate.self, context: context)
            return try jsonResponse(try await podcasts.as(context.listener).updatePlayback(.track, id: id, update))
        }
        api.get("episodes/:id/chapters") { _, context in
            let id = try context.parameters.mediaID("an episode")
            return try jsonResponse(ChapterList(chapters: try await podcasts.as(context.listener).chapters(episode: id)))
        }
        api.get("episodes/:id/transcript") { _, context in
            let id = try context.parameters.mediaID("an episode")
            return try jsonResponse(Transcript(cues: try await podcasts.as(context.listener).transcript(episode: id)))
        }
        api.get("transcripts/search") { request, context in
            let query = request.uri.queryParameters
            guard let text = query.get("q") else { throw FerryError(.invalidRequest, "Say what to look for: ?q=words") }
            var podcast: Int64?
            if let given = query.get("podcast") {
                guard let id = Int64(given), id > 0 else { throw FerryError(.invalidRequest, "podcast must be a podcast's id.") }
                podcast = id
            }
            let limit = try request.integerQuery("limit", in: 1...TranscriptSearch.maximumHits)
            return try jsonResponse(try await podcasts.as(context.listener).searchTranscripts(text, podcastId: podcast, limit: limit ?? 50))
        }
        api.delete("episodes/:id/file") { _, context in
            let id = try context.parameters.mediaID("an episode")
            return try jsonResponse(try await podcasts.as(context.listener).deleteEpisodeFile(id))
        }
        registerBookmarks(on: api)
        registerPlaylists(on: api)
        api.get("up-next") { _, context in try jsonResponse(try await podcasts.as(context.listener).upNext()) }
        api.put("up-next") { request, context in
            let order = try await request.decodeJSON(UpNextOrder.self, context: context)
            return try jsonResponse(try await podcasts.as(context.listener).setUpNext(order))
        }
    }

    /// Each listener's bookmarks: per episode or song, all together, a note changed, one removed.
    private func registerBookmarks(on api: RouterGroup<FerryRequestContext>) {
        for (media, path, what) in [(PlaybackMedia.episode, "episodes", "an episode"), (.track, "tracks", "a song's track")] {
            api.get(RouterPath("\(path)/:id/bookmarks")) { _, context in
                let id = try context.parameters.mediaID(what)
                return try jsonResponse(BookmarkList(bookmarks: try await podcasts.as(context.listener).bookmarks(media, id: id)))
            }
            api.post(RouterPath("\(path)/:id/bookmarks")) { request, context in
                let id = try context.parameters.mediaID(what)
                let new = try await request.decodeJSON(NewBookmark.self, context: context)
                return try jsonResponse(try await podcasts.as(context.listener).addBookmark(media, id: id, new), status: .created)
            }
        }
        api.get("bookmarks") { _, context in
            try jsonResponse(BookmarkList(bookmarks: try await podcasts.as(context.listener).bookmarks()))
        }
        api.patch("bookmarks/:id") { request, context in
            let id = try context.parameters.mediaID("a bookmark")
            let change = try await request.decodeJSON(BookmarkNote.self, context: context)
            return try jsonResponse(try await podcasts.as(context.listener).updateBookmark(id: id, change))
        }
        api.delete("bookmarks/:id") { _, context in
            try await podcasts.as(context.listener).deleteBookmark(id: try context.parameters.mediaID("a bookmark"))
            return Response(status: .noContent)
        }
    }

    private func playbackResponse(_ media: PlaybackMedia, id: Int64, _ context: FerryRequestContext) async throws -> Response {
        guard let playback = try await podcasts.as(context.listener).playback(media, id: id) else { return Response(status: .noContent) }
        return try jsonResponse(playback)
    }
}
