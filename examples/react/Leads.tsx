import { useEffect, useState } from "react";
import { useJobPoller } from "captaindata-poller/react";

interface Lead {
  id: string;
  full_name: string;
}

export function Leads({ jobUid }: { jobUid: string }) {
  // The saved cursor is read after mount: there is no localStorage on the server, and the
  // first render in the browser must match the server's. Until then the poller is idle.
  const [saved, setSaved] = useState<{ cursor: string | undefined } | null>(null);
  useEffect(() => setSaved({ cursor: localStorage.getItem(`cursor:${jobUid}`) ?? undefined }), [jobUid]);

  const state = useJobPoller<Lead>({
    jobUid: saved ? jobUid : null, // null: idle
    baseUrl: "https://your-proxy.example.com/v3",
    cursor: saved?.cursor, // after a reload: only the rows not delivered yet
    onBatch: (batch) => localStorage.setItem(`cursor:${jobUid}`, batch.cursor),
  });

  if (state.status === "failed") return <p>{state.error.code}: {state.error.message}</p>;
  return (
    <>
      <p>
        {state.status}: {state.rowCount} rows
        {state.rowsBefore > 0 && ` (the first ${state.rowsBefore} were shown before the reload)`}
        {state.retrying && ` (retrying ${state.retrying.attempt}/${state.retrying.retries}: ${state.retrying.error.message})`}
        <button onClick={state.stop}>Stop</button>
      </p>
      <ul>{state.rows.map((row) => <li key={row.id}>{row.full_name}</li>)}</ul>
    </>
  );
}
