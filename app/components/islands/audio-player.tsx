import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { clock } from "~/components/ui/clock";

// SPEC §2 "Audio player modal": restart, play/pause, mute, volume, seek bar,
// current and total time. An island: the page hydrates only while it is open,
// and without JavaScript the same dialog shows the native <audio controls>.

const control = "rounded-md border border-slate-300 px-3 py-1.5 text-sm text-slate-700 hover:bg-slate-50";

export function AudioPlayer({ src, fallback }: { src: string; fallback: React.ReactNode }) {
  const { t } = useTranslation("recordings");
  const audio = useRef<HTMLAudioElement>(null);
  const [ready, setReady] = useState(false);
  const [playing, setPlaying] = useState(false);
  const [muted, setMuted] = useState(false);
  const [volume, setVolume] = useState(1);
  const [current, setCurrent] = useState(0);
  const [duration, setDuration] = useState(0);
  const [failed, setFailed] = useState(false);

  // Until hydration the native controls are shown; afterwards this island takes over.
  useEffect(() => setReady(true), []);

  if (!ready) return <>{fallback}</>;
  return (
    <div data-player-island>
      <audio
        ref={audio}
        src={src}
        preload="metadata"
        onLoadedMetadata={(e) => setDuration(e.currentTarget.duration)}
        onTimeUpdate={(e) => setCurrent(e.currentTarget.currentTime)}
        onPlay={() => setPlaying(true)}
        onPause={() => setPlaying(false)}
        onEnded={() => setPlaying(false)}
        onError={() => setFailed(true)}
      />
      {failed ? (
        <p role="alert" className="mb-3 text-sm text-red-700">
          {t("player.loadFailed")}
        </p>
      ) : null}
      <div className="flex items-center gap-3">
        <span className="w-14 text-right text-xs text-slate-600 tabular-nums" data-current-time>
          {clock(current)}
        </span>
        <input
          type="range"
          min={0}
          max={duration || 0}
          step={0.1}
          value={current}
          aria-label={t("player.seek")}
          onChange={(e) => {
            if (audio.current) audio.current.currentTime = Number(e.target.value);
            setCurrent(Number(e.target.value));
          }}
          className="flex-1"
        />
        <span className="w-14 text-xs text-slate-600 tabular-nums" data-total-time>
          {clock(duration)}
        </span>
      </div>
      <div className="mt-3 flex flex-wrap items-center gap-2">
        <button
          type="button"
          className={control}
          onClick={() => {
            const element = audio.current;
            if (!element) return;
            element.currentTime = 0;
            void element.play().catch(() => setFailed(true));
          }}
        >
          {t("player.restart")}
        </button>
        <button
          type="button"
          className={control}
          data-play-toggle
          onClick={() => {
            const element = audio.current;
            if (!element) return;
            if (element.paused) void element.play().catch(() => setFailed(true));
            else element.pause();
          }}
        >
          {playing ? t("player.pause") : t("player.play")}
        </button>
        <button
          type="button"
          className={control}
          aria-pressed={muted}
          onClick={() => {
            const element = audio.current;
            if (!element) return;
            element.muted = !element.muted;
            setMuted(element.muted);
          }}
        >
          {muted ? t("player.unmute") : t("player.mute")}
        </button>
        <label className="ml-auto flex items-center gap-2 text-sm text-slate-700">
          {t("player.volume")}
          <input
            type="range"
            min={0}
            max={1}
            step={0.05}
            value={volume}
            onChange={(e) => {
              const next = Number(e.target.value);
              if (audio.current) audio.current.volume = next;
              setVolume(next);
            }}
          />
        </label>
      </div>
    </div>
  );
}
