// A hand-written corpus of bench/memory-quality.ts (written for this bench, issue 37; no template): two
// multi-session chats as people type them, stored one turn per memory. Its questions were written after
// the turns and on purpose in other words: synonyms ("car" → "vehicle"), pronouns and names resolved
// elsewhere ("her brother-in-law"), hops through names (a person introduced in one session, her news in
// another), and dates written differently from the session dates ("mid-March", "3/14", "the spring").
// A turn is [speaker, text] or [speaker, text, key]; a question names the keys of the turns that answer it.

export type WrittenTurn = [string, string] | [string, string, string];
export type WrittenSession = { date: string; turns: WrittenTurn[] };
export type WrittenQuestion = { q: string; keys: string[]; kind: string };
export type WrittenChat = { sessions: WrittenSession[]; questions: WrittenQuestion[] };

const maya: WrittenChat = {
  sessions: [
    {
      date: '2025-01-12',
      turns: [
        ['Maya', 'hey!! long time, how was the holiday break?'],
        ['Tomás', 'quiet, mostly slept and ate too much. you?'],
        ['Maya', 'same honestly. oh and my sister Inês got engaged on new years eve', 'ines-engaged'],
        ['Tomás', 'no way, to the guy from the climbing gym?'],
        ['Maya', 'yes, Rui. he proposed at the top of the lighthouse in Cascais', 'rui-propose'],
        ['Tomás', 'that is so cinematic lol'],
        ['Maya', 'she cried for like an hour, mum cried more'],
        ['Tomás', 'haha classic. when is the wedding?'],
        ['Maya', 'they are thinking September, somewhere in the Douro valley', 'wedding-plan'],
        ['Tomás', 'wine country, nice choice'],
        ['Maya', 'anyway how is the new job going'],
        [
          'Tomás',
          'good so far. I moved from the bank to a small startup that does solar panel installs',
          'tomas-job',
        ],
        ['Maya', 'wait you quit the bank?? since when'],
        ['Tomás', 'first week of December. I was so done with spreadsheets'],
        ['Maya', 'proud of you. ok gotta run, talk soon'],
      ],
    },
    {
      date: '2025-02-03',
      turns: [
        ['Tomás', 'morning! survived monday?'],
        ['Maya', 'barely. the car died on the bridge this morning', 'car-died'],
        ['Tomás', 'oh no what happened'],
        ['Maya', 'the mechanic says the gearbox is gone, 2800 euros to fix it', 'gearbox'],
        ['Tomás', 'ouch. is it even worth fixing at that point'],
        ['Maya', 'probably not, it is a 2009 Corsa. I might just sell it for parts'],
        ['Tomás', 'you could borrow my bike for a while'],
        ['Maya', 'that is sweet, I might take you up on it'],
        ['Tomás', 'btw my mum is visiting from Valencia next weekend'],
        ['Maya', 'fun! does she still make that orange cake'],
        ['Tomás', 'she does, I will save you a slice'],
        ['Maya', 'you are the best'],
      ],
    },
    {
      date: '2025-03-14',
      turns: [
        ['Maya', 'guess who bought an electric car', 'ev-bought'],
        ['Tomás', 'NO. which one'],
        ['Maya', 'a used Renault Zoe, 40k on the clock, my dad helped me pick it', 'zoe'],
        ['Tomás', 'how much did it cost you'],
        ['Maya', 'eleven thousand after the trade in, the dealer took the old corsa for 300', 'ev-price'],
        ['Tomás', 'not bad at all. range?'],
        ['Maya', 'about 300 km in summer, less when it is cold'],
        ['Tomás', 'you should get a charger at home, we install those too now'],
        ['Maya', 'send me a quote!'],
        ['Tomás', 'will do. how is Inês with the planning'],
        ['Maya', 'stressed. the venue wants a deposit by april'],
        ['Tomás', 'weddings are a whole business'],
      ],
    },
    {
      date: '2025-04-22',
      turns: [
        ['Tomás', 'so I have news'],
        ['Maya', 'tell me'],
        [
          'Tomás',
          'I got promoted, I am leading the installation crew for the whole Lisbon area now',
          'promo',
        ],
        ['Maya', 'amazing!!! more money?'],
        ['Tomás', 'a bit, and a company van, which is honestly the best part', 'van'],
        ['Maya', 'haha a van man now'],
        ['Tomás', 'also started learning the guitar, my neighbour gives lessons on thursdays', 'guitar'],
        ['Maya', 'you are becoming a whole new person this year'],
        ['Tomás', 'trying. how is the Zoe'],
        ['Maya', 'love it, but the charger at work is always taken'],
        ['Tomás', 'I told you, home charger'],
        ['Maya', 'I know I know'],
      ],
    },
    {
      date: '2025-06-09',
      turns: [
        ['Maya', 'I am writing from the hospital, dont panic'],
        ['Tomás', 'what?? are you ok'],
        ['Maya', 'broke my wrist falling off your bike, sorry about the bike', 'wrist'],
        ['Tomás', 'forget the bike, how bad is it'],
        ['Maya', 'cast for six weeks, the doctor says no typing with the left hand', 'cast'],
        ['Tomás', 'so you are typing with one hand right now'],
        ['Maya', 'yes and it takes forever'],
        ['Tomás', 'I will come by after work with soup'],
        ['Maya', 'thank you. bring the orange cake if your mum left any'],
        ['Tomás', 'it is long gone, but I will find something'],
      ],
    },
    {
      date: '2025-07-30',
      turns: [
        ['Tomás', 'cast off yet?'],
        ['Maya', 'yesterday! my arm looks like a noodle', 'cast-off'],
        ['Tomás', 'haha physio time'],
        ['Maya', 'twice a week until september, right before the wedding', 'physio'],
        [
          'Tomás',
          'speaking of which, Rui called me, he wants me to play guitar at the ceremony',
          'play-wedding',
        ],
        ['Maya', 'after three months of lessons? brave man'],
        ['Tomás', 'one song. he asked for something by Amália Rodrigues', 'amalia'],
        ['Maya', 'Inês will lose it, that is her favourite singer'],
        ['Tomás', 'no pressure at all then'],
      ],
    },
    {
      date: '2025-09-21',
      turns: [
        ['Maya', 'I still cannot believe how perfect yesterday was', 'wedding-done'],
        ['Tomás', 'the view from that quinta over the river was unreal', 'quinta'],
        ['Maya', 'and you did not miss a single chord'],
        ['Tomás', 'I missed two, nobody noticed'],
        ['Maya', 'Inês and Rui leave for Japan on tuesday for the honeymoon', 'honeymoon'],
        ['Tomás', 'two weeks?'],
        ['Maya', 'three, Tokyo then Kyoto then some island'],
        ['Tomás', 'jealous'],
        ['Maya', 'me too. ok I need to sleep for a week'],
      ],
    },
    {
      date: '2025-11-05',
      turns: [
        ['Tomás', 'finally installed your charger today, happy?', 'charger'],
        ['Maya', 'so happy, no more fighting for the one at the office'],
        ['Tomás', 'it was my crew, so I gave you the friends discount'],
        ['Maya', 'I owe you dinner'],
        ['Tomás', 'deal. also I am thinking of moving to Porto next year', 'porto'],
        ['Maya', 'what! why'],
        ['Tomás', 'the company opens an office there in March and they want me to run it', 'porto-why'],
        ['Maya', 'I will miss you, but that is huge'],
        ['Tomás', 'nothing is signed yet'],
        ['Maya', 'keep me posted'],
      ],
    },
  ],
  questions: [
    { q: 'Who is Maya’s sister going to marry?', keys: ['rui-propose'], kind: 'single-hop' },
    { q: 'Where did the marriage proposal happen?', keys: ['rui-propose'], kind: 'single-hop' },
    { q: 'What sector does Tomás work in after leaving finance?', keys: ['tomas-job'], kind: 'single-hop' },
    {
      q: 'What was wrong with Maya’s old vehicle and what would the repair cost?',
      keys: ['car-died', 'gearbox'],
      kind: 'multi-hop',
    },
    { q: 'What model of automobile did she replace it with?', keys: ['zoe'], kind: 'single-hop' },
    { q: 'How much did Maya pay for her EV?', keys: ['ev-price'], kind: 'single-hop' },
    { q: 'When did Maya get her electric vehicle?', keys: ['ev-bought'], kind: 'temporal' },
    { q: 'What happened to Tomás at work in the spring?', keys: ['promo'], kind: 'temporal' },
    { q: 'What perk came with his new role?', keys: ['van'], kind: 'single-hop' },
    {
      q: 'Which instrument has Tomás been studying and who teaches him?',
      keys: ['guitar'],
      kind: 'single-hop',
    },
    { q: 'How did Maya get injured in June?', keys: ['wrist'], kind: 'temporal' },
    {
      q: 'How long did the doctor say she had to keep her arm immobilised?',
      keys: ['cast'],
      kind: 'single-hop',
    },
    { q: 'When did the plaster come off?', keys: ['cast-off'], kind: 'temporal' },
    {
      q: 'Who asked Tomás to perform at the ceremony, and what did he request?',
      keys: ['play-wedding', 'amalia'],
      kind: 'multi-hop',
    },
    {
      q: 'Which region did the couple pick for the celebration, and where was it held in the end?',
      keys: ['wedding-plan', 'quinta'],
      kind: 'multi-hop',
    },
    { q: 'Where are the newlyweds travelling after the wedding?', keys: ['honeymoon'], kind: 'single-hop' },
    { q: 'On what date did Inês get married?', keys: ['wedding-done'], kind: 'temporal' },
    { q: 'Did Maya ever get a place to plug in her car at home?', keys: ['charger'], kind: 'open-domain' },
    {
      q: 'Why might Tomás relocate to the north of Portugal?',
      keys: ['porto', 'porto-why'],
      kind: 'multi-hop',
    },
    {
      q: 'What career changes has Tomás been through this year?',
      keys: ['tomas-job', 'promo'],
      kind: 'multi-hop',
    },
    { q: 'Would Maya’s sister enjoy a fado record as a gift?', keys: ['amalia'], kind: 'open-domain' },
    { q: 'Is Maya still doing rehab for her arm in August?', keys: ['physio'], kind: 'open-domain' },
  ],
};

const dana: WrittenChat = {
  sessions: [
    {
      date: '2024-09-02',
      turns: [
        ['Dana', 'Hi, I need help keeping track of the Harbor project, can you remember things for me?'],
        ['Assistant', 'Of course. Tell me what matters and I will keep it.'],
        [
          'Dana',
          'Harbor is the rewrite of our customer portal, the client is Northwind Logistics',
          'harbor-client',
        ],
        ['Dana', 'Our contact there is Priscilla Obi, she is their head of operations', 'priscilla'],
        ['Assistant', 'Noted. What is the timeline?'],
        [
          'Dana',
          'Kickoff was last Thursday and the first release is due on the 15th of November',
          'deadline',
        ],
        ['Dana', 'Budget is 180k, fixed price, which makes me nervous', 'budget'],
        ['Assistant', 'Understood, a fixed price with a firm date.'],
        ['Dana', 'The team is me, Kofi on backend and Lena on design', 'team'],
      ],
    },
    {
      date: '2024-09-19',
      turns: [
        ['Dana', 'Bad news, Kofi is out for three weeks, his appendix burst on Sunday', 'kofi-out'],
        ['Assistant', 'I am sorry to hear that. Do you have cover for the backend work?'],
        ['Dana', 'We are borrowing Arjun from the payments team until he is back', 'arjun'],
        [
          'Dana',
          'Also Priscilla wants single sign-on with their Azure directory, which was not in scope',
          'sso',
        ],
        ['Assistant', 'That sounds like a change request. Will you charge for it?'],
        ['Dana', 'I quoted 22k extra and she said she needs her CFO to sign it', 'sso-quote'],
        ['Dana', 'I really need coffee'],
      ],
    },
    {
      date: '2024-10-07',
      turns: [
        ['Dana', 'The CFO approved the SSO change, so the budget is now 202k', 'sso-approved'],
        ['Assistant', 'Good. Does the date move?'],
        ['Dana', 'We pushed the first release by two weeks, to the 29th of November', 'new-deadline'],
        ['Dana', 'Kofi is back part time, mornings only for now', 'kofi-back'],
        ['Dana', 'Lena finished the mockups and the client loved the dark mode', 'mockups'],
        ['Assistant', 'That is a good week.'],
        ['Dana', 'It is, for once'],
      ],
    },
    {
      date: '2024-10-28',
      turns: [
        ['Dana', 'Load testing went badly, the shipment search times out above 200 users', 'loadtest'],
        ['Assistant', 'Do you know the cause?'],
        ['Dana', 'Arjun found it, a missing index on the tracking numbers table', 'index'],
        ['Dana', 'After the fix it handles 2,000 concurrent users at under a second', 'fixed'],
        ['Dana', 'Also I am taking the Friday off, my daughter has her school play', 'friday-off'],
        ['Assistant', 'Enjoy the play.'],
      ],
    },
    {
      date: '2024-11-29',
      turns: [
        ['Dana', 'We shipped! Harbor 1.0 is live as of this morning', 'shipped'],
        ['Assistant', 'Congratulations. Any issues at launch?'],
        ['Dana', 'One, the invoice PDFs had the wrong VAT number, Lena fixed it within an hour', 'vat'],
        ['Dana', 'Priscilla sent flowers to the office, which was lovely', 'flowers'],
        ['Dana', 'Next phase is a mobile app, they want a proposal by mid January', 'phase2'],
        ['Assistant', 'I will remember the January proposal.'],
      ],
    },
    {
      date: '2025-01-13',
      turns: [
        ['Dana', 'Sent the mobile proposal today, 240k over five months', 'proposal'],
        ['Dana', 'Kofi is leaving us in February, he got an offer in Amsterdam', 'kofi-leaves'],
        ['Assistant', 'Will Arjun stay on the project?'],
        ['Dana', 'Yes, he moves over from payments permanently', 'arjun-stays'],
        ['Dana', 'Fingers crossed on the proposal'],
      ],
    },
  ],
  questions: [
    {
      q: 'Which company is the customer for the portal rewrite?',
      keys: ['harbor-client'],
      kind: 'single-hop',
    },
    {
      q: 'Who is Dana’s main point of contact at the client and what is her role?',
      keys: ['priscilla'],
      kind: 'single-hop',
    },
    {
      q: 'When was the first version of Harbor originally supposed to ship?',
      keys: ['deadline'],
      kind: 'temporal',
    },
    {
      q: 'How much money is the contract worth now, after the extra work?',
      keys: ['budget', 'sso-approved'],
      kind: 'multi-hop',
    },
    { q: 'Why was the backend engineer away in September?', keys: ['kofi-out'], kind: 'temporal' },
    { q: 'Who filled in for him while he was recovering?', keys: ['arjun'], kind: 'multi-hop' },
    {
      q: 'What extra feature did the head of operations request that was out of scope?',
      keys: ['sso'],
      kind: 'multi-hop',
    },
    { q: 'What did the login integration add to the price?', keys: ['sso-quote'], kind: 'single-hop' },
    { q: 'To what date was the launch postponed?', keys: ['new-deadline'], kind: 'temporal' },
    { q: 'What did the customer think of the designer’s work?', keys: ['mockups'], kind: 'single-hop' },
    {
      q: 'What performance problem came up in testing and what caused it?',
      keys: ['loadtest', 'index'],
      kind: 'multi-hop',
    },
    {
      q: 'How many simultaneous people can the search serve after the fix?',
      keys: ['fixed'],
      kind: 'single-hop',
    },
    { q: 'Why did Dana take a day off at the end of October?', keys: ['friday-off'], kind: 'temporal' },
    { q: 'When did the portal go live?', keys: ['shipped'], kind: 'temporal' },
    { q: 'What went wrong with the bills on launch day?', keys: ['vat'], kind: 'single-hop' },
    { q: 'How did the client say thank you?', keys: ['flowers'], kind: 'open-domain' },
    {
      q: 'What is the follow-up project and how much was quoted for it?',
      keys: ['phase2', 'proposal'],
      kind: 'multi-hop',
    },
    { q: 'Is Kofi still on the team in March 2025?', keys: ['kofi-leaves'], kind: 'open-domain' },
    {
      q: 'Where is the engineer who had surgery moving to?',
      keys: ['kofi-out', 'kofi-leaves'],
      kind: 'multi-hop',
    },
    { q: 'Does the borrowed developer go back to his old team?', keys: ['arjun-stays'], kind: 'open-domain' },
  ],
};

export const writtenChats: WrittenChat[] = [maya, dana];
