import { GraphiQL } from 'graphiql';
import type { Fetcher } from '@graphiql/toolkit';
import { useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import 'graphiql/style.css';
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { ApiError, graphql, type Caller } from './api-client.ts';
import { examples, SAMPLE_QUERY, sampleOf, type Sample, type SampleData } from './examples.ts';
import { keyGate, navBar } from './key-gate.ts';
import { PlaceView } from './place-view.tsx';
import { SummaryView } from './summary-view.tsx';

/** GraphiQL's requests, introspection included, carry the key; headers typed in GraphiQL (x-placedata-version) go along. */
function keyFetcher(key: string): Fetcher {
  return async (params, opts) => {
    const res = await fetch('/v1/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...(opts?.headers as Record<string, string> | undefined), apikey: key },
      body: JSON.stringify(params),
    });
    return res.json();
  };
}

function Explorer({ apiKey, sample }: { apiKey: string; sample: Sample }) {
  const list = useMemo(() => examples(sample), [sample]);
  const [tab, setTab] = useState<'query' | 'place' | 'summary'>('query');
  const [picked, setPicked] = useState(0);
  const fetcher = useMemo(() => keyFetcher(apiKey), [apiKey]);
  const example = list[picked]!;
  return (
    <div className="explorer">
      <div className="tabs" role="tablist">
        <button type="button" role="tab" aria-selected={tab === 'query'} onClick={() => setTab('query')}>Query editor</button>
        <button type="button" role="tab" aria-selected={tab === 'place'} onClick={() => setTab('place')}>Place view</button>
        <button type="button" role="tab" aria-selected={tab === 'summary'} onClick={() => setTab('summary')}>Summaries</button>
        {tab === 'query' && (
          <label className="examples">Example
            <select name="example" value={picked} onChange={(e) => setPicked(Number(e.target.value))}>
              {list.map((ex, i) => <option key={ex.title} value={i}>{ex.title}</option>)}
            </select>
          </label>
        )}
      </div>
      {/* Kept mounted while the place view shows, so the editor keeps its contents. */}
      <div className="graphiql-host" hidden={tab !== 'query'}>
        {/* A fresh editor per example (key): GraphiQL would otherwise keep the operation name it last ran. */}
        <GraphiQL key={picked} fetcher={fetcher} query={example.query} variables={JSON.stringify(example.variables, null, 2)} />
      </div>
      {tab === 'place' && <PlaceView apiKey={apiKey} sample={sample} />}
      {tab === 'summary' && <SummaryView apiKey={apiKey} sample={sample} />}
    </div>
  );
}

async function start(): Promise<void> {
  const root = document.getElementById('app')!;
  const gate = document.createElement('main');
  document.body.prepend(navBar('explorer', null));
  root.before(gate);
  const { key, caller } = await keyGate(gate, 'The explorer runs GraphQL queries against this service with your key.');
  gate.remove();
  try {
    show(root, key, caller, sampleOf((await graphql<SampleData>(key, SAMPLE_QUERY)).data));
  } catch (err) {
    // No version loaded yet (503 NOT_READY), or the key's rate limit is spent (429): say so.
    document.querySelector('nav.top')?.replaceWith(navBar('explorer', caller));
    const p = document.createElement('p');
    p.className = 'error';
    p.setAttribute('role', 'alert');
    p.textContent = err instanceof ApiError ? `${err.message} (${err.code}). Reload the page to try again.` : 'The server cannot be reached.';
    root.replaceChildren(p);
  }
}

function show(root: HTMLElement, key: string, caller: Caller, sample: Sample): void {
  document.querySelector('nav.top')?.replaceWith(navBar('explorer', caller));
  createRoot(root).render(<Explorer apiKey={key} sample={sample} />);
}

void start();
