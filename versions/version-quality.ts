import type { HeldState } from '../shared/held-state.ts';
import type { QualityProfile } from './quality-profile.ts';

/**
 * A stored version's quality profile and, for a held one, why it is held: an entry of
 * `GET /v1/status`'s `quality` (api/versions/version-catalog.ts adds the version's facts), as the
 * status page reads it (web/quality-types.ts).
 */
export interface VersionQuality {
  readonly label: string;
  readonly release_month: string;
  readonly profile: QualityProfile | null;
  readonly held: HeldState | null;
  readonly base: string | null;
}
